/**
 * The benchmarks' CI configuration: about 2,000 lines over a main file and 20 local includes
 * (`ci/part-N.yml`), with extends, !reference, anchors, rules and a parallel matrix. Timed by
 * ci-lint-config.ts through the language alone, and by ci.ts through the lint endpoint.
 */
export const INCLUDES = 20;
const JOBS_PER_INCLUDE = 5;

export function includeFile(n: number): string {
  const lines = [
    `.base-${n}: &base-${n}`,
    '  image: node:20',
    '  before_script:',
    '    - npm ci',
    '  tags: [docker]',
    '',
  ];
  for (let j = 0; j < JOBS_PER_INCLUDE; j++) {
    lines.push(
      `job-${n}-${j}:`,
      `  <<: *base-${n}`,
      `  extends: .shared`,
      `  stage: ${['build', 'test', 'deploy'][j % 3]}`,
      '  script:',
      `    - !reference [.shared, script]`,
      `    - echo "job ${n} ${j}"`,
      '  variables:',
      `    INDEX: "${j}"`,
      '  rules:',
      `    - if: $CI_COMMIT_BRANCH == "main" && $INDEX != "99"`,
      '      when: on_success',
      '    - if: $CI_PIPELINE_SOURCE == "merge_request_event"',
      '      changes: ["src/**/*.ts"]',
      '    - when: never',
      '',
    );
  }
  return lines.join('\n');
}

export function mainFile(): string {
  const lines = ['stages: [build, test, deploy]', 'include:'];
  for (let n = 0; n < INCLUDES; n++) lines.push(`  - local: ci/part-${n}.yml`);
  lines.push('.shared:', '  script:', '    - echo shared', '  retry: 1', '');
  for (let k = 0; k < 40; k++) {
    lines.push(
      `main-${k}:`,
      '  extends: .shared',
      `  stage: test`,
      '  needs: []',
      '  parallel:',
      '    matrix:',
      '      - OS: [linux, mac]',
      '        ARCH: [amd64, arm64]',
      '',
    );
  }
  return lines.join('\n');
}
