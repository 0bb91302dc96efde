/**
 * Configurations from GitLab's CI/CD YAML documentation, each with the pipeline it yields (stages, then
 * `job@stage:when`, `!` when it may fail, `<-needs`) or its error; then the templates the server ships.
 */
import { describe, expect, it } from 'vitest';
import {
  listTemplates,
  loadConfig,
  planPipeline,
  readTemplate,
  templateSource,
} from '../../../src/ci_config/index.js';
import { fakeContext, fakeSources, MAIN_PUSH, type FakeContext } from './fake.js';

const MR: FakeContext = {
  ref: 'feature',
  tag: false,
  source: 'merge_request_event',
  variables: {
    CI_PIPELINE_SOURCE: 'merge_request_event',
    CI_MERGE_REQUEST_IID: '7',
    CI_COMMIT_REF_NAME: 'feature',
    CI_DEFAULT_BRANCH: 'main',
  },
};
const TAG: FakeContext = {
  ref: 'v1.2.0',
  tag: true,
  source: 'push',
  variables: {
    CI_COMMIT_TAG: 'v1.2.0',
    CI_COMMIT_REF_NAME: 'v1.2.0',
    CI_PIPELINE_SOURCE: 'push',
    CI_DEFAULT_BRANCH: 'main',
  },
};

async function outcome(yaml: string, ctx: FakeContext = MAIN_PUSH): Promise<string> {
  const config = await loadConfig({
    content: yaml,
    sources: fakeSources({}, true),
    projectPath: 'g/p',
    sha: 'abc',
    variables: ctx.variables ?? {},
  });
  if (config.errors.length > 0) return `error: ${config.errors.join('; ')}`;
  const plan = await planPipeline(config, fakeContext(ctx));
  if (!plan.ok) return plan.skipped ? 'no pipeline' : `error: ${plan.errors.join('; ')}`;
  const jobs = plan.jobs.map((j) => {
    const needs = j.needs === null ? '' : `<-${j.needs.map((n) => n.name).join(',') || '[]'}`;
    return `${j.name}@${j.stage}:${j.when}${j.allowFailure ? '!' : ''}${needs}`;
  });
  return `${plan.stages.join(',')} | ${jobs.join(' ')}`;
}

const EXAMPLES: Array<[string, string, FakeContext, string]> = [
  [
    'rules: manual in merge requests, allow_failure',
    `job:
  script: echo "Hello, Rules!"
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
      when: manual
      allow_failure: true
    - if: $CI_PIPELINE_SOURCE == "push"`,
    MR,
    'test | job@test:manual!',
  ],
  [
    'rules: the same job on a push',
    `job:
  script: echo "Hello, Rules!"
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
      when: manual
      allow_failure: true
    - if: $CI_PIPELINE_SOURCE == "push"`,
    MAIN_PUSH,
    'test | job@test:on_success',
  ],
  [
    'workflow:rules that run tag and default-branch pipelines only',
    `workflow:
  rules:
    - if: $CI_COMMIT_TAG
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
job:
  script: echo`,
    MR,
    'no pipeline',
  ],
  [
    'workflow:rules on a tag',
    `workflow:
  rules:
    - if: $CI_COMMIT_TAG
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
job:
  script: echo`,
    TAG,
    'test | job@test:on_success',
  ],
  [
    'merge request pipelines with workflow:rules: jobs without rules run in them',
    `workflow:
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
    - if: $CI_COMMIT_BRANCH && $CI_OPEN_MERGE_REQUESTS
      when: never
    - if: $CI_COMMIT_BRANCH
job:
  script: echo`,
    MR,
    'test | job@test:on_success',
  ],
  [
    'extends merges variables, keeps the last tags and the job script',
    `.only-important:
  variables:
    URL: "http://my-url.internal"
    IMPORTANT_VAR: "the details"
  only: [main, stable]
  tags: [production]
  script:
    - echo "Hello world!"
.in-docker:
  variables:
    URL: "http://docker-url.internal"
  tags: [docker]
  image: alpine
rspec:
  variables:
    GITLAB: "is-awesome"
  extends:
    - .only-important
    - .in-docker
  script:
    - rake rspec`,
    MAIN_PUSH,
    'test | rspec@test:on_success',
  ],
  [
    'needs: parallel jobs of earlier stages, DAG',
    `stages: [build, test]
build:
  stage: build
  script: make
  parallel: 2
test:
  stage: test
  needs: [build]
  script: make test`,
    MAIN_PUSH,
    'build,test | build 1/2@build:on_success build 2/2@build:on_success test@test:on_success<-build 1/2,build 2/2',
  ],
  [
    'when: delayed with start_in',
    `timed rollout 10%:
  stage: deploy
  script: echo 'Rolling out 10% ...'
  when: delayed
  start_in: 30 minutes
  environment: production`,
    MAIN_PUSH,
    'deploy | timed rollout 10%@deploy:delayed',
  ],
  [
    'allow_failure on a manual job in rules defaults to false',
    `deploy:
  script: deploy
  rules:
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
      when: manual`,
    MAIN_PUSH,
    'test | deploy@test:manual',
  ],
  [
    'needs:optional on a job that rules leave out',
    `build-job:
  stage: build
  script: make
  rules:
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
test-job1:
  stage: test
  script: test
  rules:
    - if: $CI_PIPELINE_SOURCE
  needs:
    - job: build-job
      optional: true`,
    MR,
    'test | test-job1@test:on_success<-[]',
  ],
  [
    'a job that needs a job rules left out',
    `build-job:
  stage: build
  script: make
  rules:
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
test-job1:
  stage: test
  script: test
  rules:
    - when: always
  needs: [build-job]`,
    MR,
    "error: 'test-job1' job needs 'build-job' job, but 'build-job' does not exist in the pipeline. This might be because of the only, except, or rules keywords. To need a job that sometimes does not exist in the pipeline, use needs:optional.",
  ],
  [
    'include: template',
    `include:
  - template: Docker.gitlab-ci.yml`,
    { ...MAIN_PUSH, existing: ['Dockerfile'] },
    'build | docker-build@build:on_success',
  ],
  [
    'only and except with the same ref',
    `job:
  script: echo
  only: [branches]
  except: [main]`,
    MAIN_PUSH,
    'no pipeline',
  ],
  [
    'job names with colons and spaces',
    `"test: unit":
  script: echo
"deploy to production":
  stage: deploy
  script: echo`,
    MAIN_PUSH,
    'test,deploy | test: unit@test:on_success deploy to production@deploy:on_success',
  ],
  [
    'an unknown global keyword is a job without script',
    `stage: build
job:
  script: echo`,
    MAIN_PUSH,
    'error: jobs stage config should implement the script:, run:, or trigger: keyword',
  ],
];

describe('GitLab documentation examples', () => {
  it.each(EXAMPLES)('%s', async (_title, yaml, ctx, want) => {
    expect(await outcome(yaml, ctx)).toBe(want);
  });
});

describe('what loadConfig reports besides jobs', () => {
  it('records includes, merges them into merged_yaml and drops the include keyword', async () => {
    const config = await loadConfig({
      content: 'include:\n  - local: a.yml\n  - project: g/other\n    file: b.yml\njob:\n  script: echo\n',
      sources: fakeSources({
        local: { 'a.yml': 'a:\n  script: a\n' },
        project: { 'g/other@main:b.yml': 'b:\n  script: b\n' },
      }),
      projectPath: 'g/p',
      sha: 'abc',
    });
    expect(config.errors).toEqual([]);
    expect(config.includes).toEqual([
      {
        type: 'local',
        location: 'a.yml',
        blob: null,
        raw: null,
        extra: {},
        context_project: 'g/p',
        context_sha: 'abc',
      },
      {
        type: 'file',
        location: 'b.yml',
        blob: null,
        raw: null,
        extra: { project: 'g/other', ref: null },
        context_project: 'g/p',
        context_sha: 'abc',
      },
    ]);
    expect(config.mergedYaml).toContain('a:\n  script: a');
    expect(config.mergedYaml).not.toContain('include');
    expect(config.jobs.map((j) => j.name)).toEqual(['a', 'b', 'job']);
  });

  it('resolves a local include inside a project include in that project', async () => {
    const config = await loadConfig({
      content: 'include:\n  - project: g/other\n    ref: v1\n    file: ci/main.yml\n',
      sources: fakeSources({
        project: {
          'g/other@v1:ci/main.yml': 'include: ci/jobs.yml\n',
          'g/other@sha-of-g/other:ci/jobs.yml': 'x:\n  script: x\n',
        },
      }),
      projectPath: 'g/p',
      sha: 'abc',
    });
    expect(config.errors).toEqual([]);
    expect(config.jobs.map((j) => j.name)).toEqual(['x']);
    expect(config.includes[1]).toMatchObject({
      type: 'local',
      location: 'ci/jobs.yml',
      context_project: 'g/other',
    });
  });

  it('keeps variable descriptions and options, and warns about a final rules:when without workflow:rules', async () => {
    const config = await loadConfig({
      content: `variables:
  DEPLOY_ENVIRONMENT:
    value: "staging"
    options: ["production", "staging", "canary"]
    description: "The deployment target."
job:
  script: echo
  rules:
    - when: always
`,
      sources: fakeSources(),
      projectPath: 'g/p',
      sha: 'abc',
    });
    expect(config.variables).toEqual({ DEPLOY_ENVIRONMENT: 'staging' });
    expect(config.variableOptions).toEqual({
      DEPLOY_ENVIRONMENT: {
        value: 'staging',
        description: 'The deployment target.',
        options: ['production', 'staging', 'canary'],
      },
    });
    expect(config.warnings).toEqual([
      'jobs:job may allow multiple pipelines to run for a single action due to `rules:when` clause with no `workflow:rules` - read more: https://docs.gitlab.com/ee/ci/troubleshooting.html#pipeline-warnings',
    ]);
  });

  it('answers the remote include failure as GitLab words it', async () => {
    const config = await loadConfig({
      content: 'include: https://example.com/ci.yml\n',
      sources: fakeSources(),
      projectPath: 'g/p',
      sha: 'abc',
    });
    expect(config.errors).toEqual([
      'Remote file `https://example.com/ci.yml` could not be fetched because of HTTP code `404` error!',
    ]);
  });
});

describe('templates', () => {
  it('lists its templates sorted by key and reads each one', () => {
    const list = listTemplates();
    expect(list.map((t) => t.key)).toEqual(['Docker', 'Nodejs', 'Pages-HTML', 'Python', 'SAST']);
    for (const t of list) expect(readTemplate(t.key)).toMatch(/script/);
    expect(readTemplate('Nope')).toBeNull();
    expect(readTemplate('__proto__')).toBeNull();
  });

  it.each(listTemplates().map((t) => t.key))(
    '%s loads without errors and plans a pipeline on a branch',
    async (key) => {
      const config = await loadConfig({
        content: `include:\n  - template: ${key}.gitlab-ci.yml\n`,
        sources: { ...fakeSources(), template: templateSource },
        projectPath: 'g/p',
        sha: 'abc',
      });
      expect(config.errors).toEqual([]);
      const plan = await planPipeline(config, fakeContext({ ...MAIN_PUSH, existing: ['Dockerfile'] }));
      expect(plan.ok).toBe(true);
    },
  );
});

describe('include: local with a wildcard', () => {
  const files = {
    'configs/a.yml': 'a:\n  script: a\n',
    'configs/b.yaml': 'b:\n  script: b\n',
    'configs/sub/c.yml': 'c:\n  script: c\n',
    'configs/readme.md': 'not yaml',
    'other/d.yml': 'd:\n  script: d\n',
  };
  const load = (pattern: string) =>
    loadConfig({
      content: `include: '${pattern}'\nmain:\n  script: main\n`,
      sources: { ...fakeSources({ local: files }), localPaths: async () => Object.keys(files) },
      projectPath: 'g/p',
      sha: 'abc',
    });

  it.each([
    ['configs/*.yml', ['a', 'main']],
    ['configs/*.y*ml', ['a', 'b', 'main']],
    ['configs/**.yml', ['a', 'c', 'main']],
    ['configs/**/*.yml', ['c', 'main']],
  ])('%s includes %j', async (pattern, jobs) => {
    const config = await load(pattern);
    expect(config.errors).toEqual([]);
    expect(config.jobs.map((j) => j.name)).toEqual(jobs);
  });

  it('answers GitLab message when nothing matches', async () => {
    expect((await load('nothing/*.yml')).errors).toEqual(['Local file `nothing/*.yml` does not exist!']);
  });
});

describe('workflow:auto_cancel', () => {
  it('takes the matching workflow rule auto_cancel over the workflow one', async () => {
    const config = await loadConfig({
      content: `workflow:
  auto_cancel:
    on_new_commit: interruptible
    on_job_failure: all
  rules:
    - if: $CI_COMMIT_REF_PROTECTED == 'true'
      auto_cancel:
        on_new_commit: none
    - when: always
job:
  script: echo
`,
      sources: fakeSources(),
      projectPath: 'g/p',
      sha: 'abc',
    });
    expect(config.errors).toEqual([]);
    const protectedRef = await planPipeline(
      config,
      fakeContext({ ...MAIN_PUSH, variables: { CI_COMMIT_REF_PROTECTED: 'true' } }),
    );
    expect(protectedRef).toMatchObject({
      ok: true,
      autoCancel: { on_new_commit: 'none', on_job_failure: 'all' },
    });
    const other = await planPipeline(config, fakeContext(MAIN_PUSH));
    expect(other).toMatchObject({
      ok: true,
      autoCancel: { on_new_commit: 'interruptible', on_job_failure: 'all' },
    });
  });
});

describe('what a planned job carries', () => {
  it('has the YAML variables it sees, workflow rule variables over globals, rules over its own', async () => {
    const config = await loadConfig({
      content: `variables:
  GLOBAL: g
  OTHER: o
workflow:
  rules:
    - if: $CI_COMMIT_BRANCH
      variables:
        GLOBAL: from-workflow
job:
  variables:
    OWN: own
  inherit:
    variables: [GLOBAL]
  interruptible: false
  rules:
    - if: $CI_COMMIT_BRANCH
      variables:
        OWN: from-rule
      interruptible: true
  script: echo
`,
      sources: fakeSources(),
      projectPath: 'g/p',
      sha: 'abc',
    });
    const plan = await planPipeline(config, fakeContext(MAIN_PUSH));
    if (!plan.ok) throw new Error(JSON.stringify(plan));
    expect(plan.variables).toEqual({ GLOBAL: 'from-workflow' });
    const [job] = plan.jobs;
    expect(job?.variables).toEqual({ OWN: 'from-rule' });
    expect(job?.yamlVariables).toEqual({ GLOBAL: 'from-workflow', OWN: 'from-rule' });
    expect(job?.interruptible).toBe(true);
    expect(job?.stageIndex).toBe(2);
  });
});
