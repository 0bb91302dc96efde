export default `# Builds and tests a Node.js project with npm.
# Set NODE_VERSION to pick the image; the npm cache is kept between pipelines per lock file.
variables:
  NODE_VERSION: "20"
  npm_config_cache: "$CI_PROJECT_DIR/.npm"

default:
  image: node:$NODE_VERSION
  cache:
    key:
      files:
        - package-lock.json
    paths:
      - .npm/

stages:
  - build
  - test

install:
  stage: build
  script:
    - npm ci --no-audit --prefer-offline
  artifacts:
    paths:
      - node_modules/
    expire_in: 1 hour

lint:
  stage: test
  needs: [install]
  script:
    - npm run lint --if-present

unit:
  stage: test
  needs: [install]
  script:
    - npm test
  coverage: /All files[^|]*\\|[^|]*\\s+([\\d\\.]+)/
`;
