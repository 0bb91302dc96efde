export default `# Publishes the "public" folder as a static site with GitLab Pages, on the default branch only.
pages:
  stage: deploy
  image: alpine:3.20
  script:
    - test -d public || { echo "put the site in ./public"; exit 1; }
  artifacts:
    paths:
      - public
  rules:
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
`;
