import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { pipelineHelpers } from '../helpers/pipelines.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

type Json = Record<string, unknown>;
const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });
const { work, gitCli } = useGitWorkDir('forge-pipelines-');

const { commit, pipelineFor, get, jobsOf, settle, run, byName } = pipelineHelpers(server);

const DEFAULT_LIMITS = { ci_pipeline_size: 0, ci_active_jobs: 0, pipeline_hierarchy_size: 1000 };
/** Sets the instance's plan limits as an administrator does. */
const limit = async (fields: Partial<typeof DEFAULT_LIMITS>) => {
  const admin = await server.factories.user({ admin: true });
  const response = await server.request('PUT', '/application/plan_limits', {
    token: admin.token,
    json: { plan_name: 'default', ...fields },
  });
  expect(response.status).toBe(200);
};

const CONFIG = `
stages: [build, test, deploy]
include:
  - local: ci/common.yml
    inputs:
      env: production
build:
  stage: build
  script: make
  rules:
    - if: $CI_COMMIT_BRANCH == "main"
tag-only:
  stage: build
  script: make release
  rules:
    - if: $CI_COMMIT_TAG
test:
  stage: test
  parallel:
    matrix:
      - RUBY: ["3.2", "3.3"]
  script: rspec
lint:
  stage: test
  needs: []
  script: lint
exists-job:
  stage: test
  script: x
  rules:
    - exists: [ci/*.yml]
absent-file:
  stage: test
  script: x
  rules:
    - exists: [nothing/**/*.txt]
changes-job:
  stage: test
  script: x
  rules:
    - changes: [ci/**/*]
unchanged:
  stage: test
  script: x
  rules:
    - changes: [src/**/*]
child:
  stage: deploy
  trigger:
    include: ci/child.yml
    strategy: depend
deploy:
  stage: deploy
  script: deploy
  when: manual
  allow_failure: false
`;
const COMMON = `spec:
  inputs:
    env:
      default: staging
---
check-$[[ inputs.env ]]:
  stage: test
  script: echo check
`;
const CHILD = `child-job:
  script: echo child
`;

describe('a push', () => {
  it('makes the same tree from a git push over HTTP', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const { path_with_namespace: fullPath } = await get(owner.token, `/projects/${project.id}`);
    const dir = path.join(work, `push-${project.id}`);
    const cloned = await gitCli(['clone', '-q', remoteUrl(server.url, String(fullPath), owner.token), dir]);
    expect(cloned.ok, cloned.stderr).toBe(true);
    const files = { '.gitlab-ci.yml': CONFIG, 'ci/common.yml': COMMON, 'ci/child.yml': CHILD };
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), content);
    }
    for (const args of [
      ['add', '-A'],
      ['commit', '-q', '-m', 'Add CI'],
      ['push', '-q', 'origin', 'main'],
    ]) {
      const done = await gitCli(args, dir);
      expect(done.ok, done.stderr).toBe(true);
    }
    const sha = (await gitCli(['rev-parse', 'HEAD'], dir)).stdout.trim();
    const pipeline = await pipelineFor(owner.token, project, sha);
    expect(pipeline).toMatchObject({ source: 'push', ref: 'main', sha });
    const jobs = await settle(owner.token, project, pipeline.id, {
      build: 'pending',
      lint: 'pending',
      deploy: 'created',
    });
    expect(jobs.map((j) => [j.name, j.stage])).toEqual([
      ['check-production', 'test'],
      ['build', 'build'],
      ['test: [3.2]', 'test'],
      ['test: [3.3]', 'test'],
      ['lint', 'test'],
      ['exists-job', 'test'],
      ['changes-job', 'test'],
      ['deploy', 'deploy'],
    ]);
    const detail = await get(owner.token, `/projects/${project.id}/pipelines/${pipeline.id}`);
    expect(detail.user).toMatchObject({ id: owner.user.id });
    // `git push -o ci.skip` skips the pushed commit's pipeline, as `[ci skip]` in its message does.
    fs.writeFileSync(path.join(dir, 'README.md'), 'skipped\n');
    for (const args of [
      ['commit', '-q', '-am', 'No CI'],
      ['push', '-q', '-o', 'ci.skip', 'origin', 'main'],
    ]) {
      const done = await gitCli(args, dir);
      expect(done.ok, done.stderr).toBe(true);
    }
    const skippedSha = (await gitCli(['rev-parse', 'HEAD'], dir)).stdout.trim();
    expect((await pipelineFor(owner.token, project, skippedSha)).status).toBe('skipped');
  });

  it('makes the tree of stages, jobs and a child pipeline, and the statuses follow the jobs', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const { token } = owner;
    const sha = await commit(token, project, {
      '.gitlab-ci.yml': CONFIG,
      'ci/common.yml': COMMON,
      'ci/child.yml': CHILD,
    });
    const pipeline = await pipelineFor(token, project, sha);
    expect(pipeline).toMatchObject({ source: 'push', ref: 'main', sha, status: expect.any(String) });
    let jobs = await settle(token, project, pipeline.id, {
      build: 'pending',
      lint: 'pending',
      'test: [3.2]': 'created',
      'test: [3.3]': 'created',
      'check-production': 'created',
      deploy: 'created',
    });
    // Included jobs come first, as GitLab merges the main file onto its includes.
    expect(jobs.map((j) => [j.name, j.stage])).toEqual([
      ['check-production', 'test'],
      ['build', 'build'],
      ['test: [3.2]', 'test'],
      ['test: [3.3]', 'test'],
      ['lint', 'test'],
      ['exists-job', 'test'],
      ['changes-job', 'test'],
      ['deploy', 'deploy'],
    ]);
    const bridges = (await get(
      token,
      `/projects/${project.id}/pipelines/${pipeline.id}/bridges`,
    )) as unknown as Json[];
    expect(bridges.map((b) => [b.name, b.status, b.downstream_pipeline])).toEqual([
      ['child', 'created', null],
    ]);
    expect((await get(token, `/projects/${project.id}/pipelines/${pipeline.id}`)).status).toBe('pending');

    await run(byName(jobs, 'build').id, 'running');
    let detail = await get(token, `/projects/${project.id}/pipelines/${pipeline.id}`);
    expect(detail).toMatchObject({
      status: 'running',
      detailed_status: { icon: 'status_running', text: 'Running' },
    });
    expect(detail.started_at).not.toBeNull();
    await run(byName(jobs, 'build').id, 'success');
    await run(byName(jobs, 'lint').id, 'running', 'success');
    jobs = await settle(token, project, pipeline.id, {
      'test: [3.2]': 'pending',
      'check-production': 'pending',
    });
    for (const name of ['test: [3.2]', 'test: [3.3]', 'check-production', 'exists-job', 'changes-job'])
      await run(byName(jobs, name).id, 'running', 'success');

    // The deploy stage: the manual job waits, the bridge starts its child pipeline.
    await settle(token, project, pipeline.id, { deploy: 'manual' });
    const child = await pipelineFor(token, project, sha, '&source=parent_pipeline');
    expect(child.source).toBe('parent_pipeline');
    const listed = (await get(token, `/projects/${project.id}/pipelines?sha=${sha}`)) as unknown as Json[];
    expect(listed.map((p) => p.id)).toEqual([pipeline.id]);
    const childJobs = await settle(token, project, child.id, { 'child-job': 'pending' });
    const bridge = await waitFor(
      () => get(token, `/projects/${project.id}/pipelines/${pipeline.id}/bridges`),
      (list) => (list as unknown as Json[])[0].status === 'running',
    );
    expect((bridge as unknown as Json[])[0]).toMatchObject({
      status: 'running',
      downstream_pipeline: { id: child.id, source: 'parent_pipeline' },
    });
    await run(byName(childJobs, 'child-job').id, 'running', 'success');
    await waitFor(
      () => get(token, `/projects/${project.id}/pipelines/${pipeline.id}/bridges`),
      (list) => (list as unknown as Json[])[0].status === 'success',
    );
    detail = await waitFor(
      () => get(token, `/projects/${project.id}/pipelines/${pipeline.id}`),
      (p) => p.status === 'manual',
    );
    expect(detail).toMatchObject({
      status: 'manual',
      detailed_status: {
        text: 'Blocked',
        label: 'waiting for manual action',
        icon: 'status_manual',
        group: 'manual',
      },
    });

    // Playing the manual job and finishing it passes the pipeline.
    const deploy = byName(jobs, 'deploy');
    const played = await server.request('POST', `/projects/${project.id}/jobs/${deploy.id}/play`, {
      token,
      json: { job_variables_attributes: [{ key: 'TARGET', value: 'canary' }] },
    });
    expect(played.status, played.text).toBe(200);
    expect(played.body).toMatchObject({ id: deploy.id, status: 'pending', when: 'manual' });
    await run(deploy.id, 'running', 'success');
    detail = await get(token, `/projects/${project.id}/pipelines/${pipeline.id}`);
    expect(detail).toMatchObject({
      status: 'success',
      detailed_status: {
        icon: 'status_success',
        text: 'Passed',
        label: 'passed',
        group: 'success',
        tooltip: 'passed',
        has_details: true,
        details_path:
          `/${(project as unknown as { namespace?: { fullPath: string } }).namespace?.fullPath ?? ''}`.length
            ? expect.stringMatching(new RegExp(`/-/pipelines/${pipeline.id}$`))
            : expect.any(String),
        favicon: '/assets/ci_favicons/favicon_status_success.png',
      },
    });
    expect(detail.finished_at).not.toBeNull();
    expect(detail.duration).toEqual(expect.any(Number));
    expect(detail.queued_duration).toEqual(expect.any(Number));
  });

  it('keeps a configuration error as a failed pipeline with yaml_errors, and skips with [ci skip]', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const bad = await commit(owner.token, project, {
      '.gitlab-ci.yml': 'job:\n  stage: nowhere\n  script: x\n',
    });
    const failed = await pipelineFor(owner.token, project, bad);
    const detail = await get(owner.token, `/projects/${project.id}/pipelines/${failed.id}`);
    expect(detail).toMatchObject({ status: 'failed', yaml_errors: expect.stringContaining('nowhere') });
    const skipped = await commit(
      owner.token,
      project,
      { '.gitlab-ci.yml': 'job:\n  script: x\n' },
      { message: 'Fix it [ci skip]', action: 'update' },
    );
    expect((await pipelineFor(owner.token, project, skipped)).status).toBe('skipped');
    const errors = await server.request('GET', `/projects/${project.id}/pipelines?yaml_errors=true`, {
      token: owner.token,
    });
    expect((errors.body as Json[]).map((p) => p.id)).toEqual([failed.id]);
  });
});

describe('the API', () => {
  it('creates pipelines with variables and inputs, and refuses a bad ref or configuration with base errors', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    await commit(owner.token, project, {
      '.gitlab-ci.yml': `spec:
  inputs:
    target:
      default: staging
---
deploy-$[[ inputs.target ]]:
  script: deploy
  rules:
    - if: $DEPLOY == "yes"
`,
    });
    const create = (json: Json) =>
      server.request('POST', `/projects/${project.id}/pipeline`, { token: owner.token, json });
    const refused = await create({ ref: 'main' });
    expect(refused.status).toBe(400);
    expect((refused.body as { message: { base: string[] } }).message.base[0]).toMatch(
      /Pipeline will not run|filtered/,
    );
    expect((await create({ ref: 'nope' })).body).toEqual({ message: { base: ['Reference not found'] } });
    const created = await create({
      ref: 'main',
      variables: [
        { key: 'DEPLOY', value: 'yes' },
        { key: 'CONFIG', value: 'a=b', variable_type: 'file' },
      ],
      inputs: { target: 'production' },
    });
    expect(created.status, created.text).toBe(201);
    const pipeline = created.body as Json & { id: number };
    expect(pipeline).toMatchObject({ source: 'api', ref: 'main', tag: false, user: { id: owner.user.id } });
    const vars = await get(owner.token, `/projects/${project.id}/pipelines/${pipeline.id}/variables`);
    expect(vars).toEqual([
      { key: 'DEPLOY', value: 'yes', variable_type: 'env_var', raw: false },
      { key: 'CONFIG', value: 'a=b', variable_type: 'file', raw: false },
    ]);
    expect((await jobsOf(owner.token, project, pipeline.id)).map((j) => j.name)).toEqual([
      'deploy-production',
    ]);

    const latest = await get(owner.token, `/projects/${project.id}/pipelines/latest`);
    expect(latest.id).toBe(pipeline.id);
    await commit(
      owner.token,
      project,
      { 'x.txt': 'x' },
      { branch: 'side', from: 'main', message: 'x [skip ci]' },
    );
    await commit(owner.token, project, { 'y.txt': 'y' }, { branch: 'side', message: 'y [skip ci]' });
    const none = await server.request('GET', `/projects/${project.id}/pipelines/latest?ref=nothing`, {
      token: owner.token,
    });
    expect(none.status).toBe(403);

    const badConfig = await server.factories.ownedProjectWithReadme();
    await commit(badConfig.owner.token, badConfig.project, { '.gitlab-ci.yml': 'job: [\n' });
    const bad = await server.request('POST', `/projects/${badConfig.project.id}/pipeline`, {
      token: badConfig.owner.token,
      json: { ref: 'main' },
    });
    expect(bad.status).toBe(400);
    expect((bad.body as { message: { base: string[] } }).message.base.length).toBeGreaterThan(0);
  });

  it('filters and orders the list (table-driven)', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    await commit(owner.token, project, { '.gitlab-ci.yml': 'job: { script: x }\n' });
    const developer = await server.factories.memberOf(project, AccessLevel.Maintainer);
    const main = await waitFor(
      () => server.request('GET', `/projects/${project.id}/pipelines`, { token: owner.token }),
      (res) => (res.body as Json[]).length === 1,
    );
    const pushed = (main.body as Json[])[0] as Json & { id: number };
    await run((await jobsOf(owner.token, project, pushed.id))[0].id, 'running', 'success');
    const apiCreated = await server.request('POST', `/projects/${project.id}/pipeline`, {
      token: developer.token,
      json: { ref: 'main' },
    });
    expect(apiCreated.status).toBe(201);
    const api = apiCreated.body as Json & { id: number };
    const tagRes = await server.request('POST', `/projects/${project.id}/repository/tags`, {
      token: owner.token,
      json: { tag_name: 'v1', ref: 'main' },
    });
    expect(tagRes.status).toBe(201);
    const tag = await waitFor(
      () => server.request('GET', `/projects/${project.id}/pipelines?scope=tags`, { token: owner.token }),
      (res) => (res.body as Json[]).length === 1,
    );
    const tagged = (tag.body as Json[])[0] as Json & { id: number };
    const cases: Array<[string, number[]]> = [
      ['', [tagged.id, api.id, pushed.id]],
      ['?sort=asc', [pushed.id, api.id, tagged.id]],
      ['?scope=finished', [pushed.id]],
      ['?scope=pending', [tagged.id, api.id]],
      ['?scope=branches', [api.id]],
      ['?scope=tags', [tagged.id]],
      ['?status=success', [pushed.id]],
      ['?source=api', [api.id]],
      ['?source=push', [tagged.id, pushed.id]],
      ['?ref=v1', [tagged.id]],
      [`?username=${developer.user.username}`, [api.id]],
      ['?yaml_errors=false', [tagged.id, api.id, pushed.id]],
      ['?order_by=status&sort=asc', [api.id, tagged.id, pushed.id]],
      ['?order_by=user_id&sort=desc', [api.id, tagged.id, pushed.id]],
      [`?updated_after=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, []],
      [
        `?created_before=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
        [tagged.id, api.id, pushed.id],
      ],
      ['?name=none', []],
      ['?per_page=1&page=2', [api.id]],
    ];
    for (const [query, ids] of cases) {
      const res = await server.request('GET', `/projects/${project.id}/pipelines${query}`, {
        token: owner.token,
      });
      expect(res.status, query).toBe(200);
      expect(
        (res.body as Json[]).map((p) => p.id),
        query,
      ).toEqual(ids);
    }
    const paged = await server.request('GET', `/projects/${project.id}/pipelines?per_page=1`, {
      token: owner.token,
    });
    expect(paged.headers.get('x-total')).toBe('3');
    expect(paged.headers.get('link')).toContain('rel="next"');
  });

  it('refuses a pipeline over the plan limits with GitLab messages', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const sha = await commit(owner.token, project, {
      '.gitlab-ci.yml': 'a: { script: x }\nb: { script: x }\nc: { script: x }\n',
    });
    // The push's pipeline holds three active jobs.
    await pipelineFor(owner.token, project, sha);
    const create = () =>
      server.request('POST', `/projects/${project.id}/pipeline`, {
        token: owner.token,
        json: { ref: 'main' },
      });
    try {
      await limit({ ci_pipeline_size: 2 });
      const size = await create();
      expect(size.status).toBe(400);
      expect((size.body as { message: { base: string[] } }).message.base[0]).toMatch(
        /^The number of jobs has exceeded the limit of 2\. Try splitting the configuration with parent-child-pipelines http/,
      );
      await limit({ ci_pipeline_size: 0, ci_active_jobs: 4 });
      const active = await create();
      expect(active.body).toEqual({
        message: { base: ['Project exceeded the allowed number of jobs in active pipelines. Retry later.'] },
      });
    } finally {
      await limit(DEFAULT_LIMITS);
    }
    const needs = Array.from({ length: 51 }, (_, i) => `j${i}: { script: x }`).join('\n');
    const other = await server.factories.ownedProjectWithReadme();
    await commit(other.owner.token, other.project, {
      '.gitlab-ci.yml': `${needs}\nlast: { script: x, stage: test, needs: [${Array.from({ length: 51 }, (_, i) => `j${i}`).join(', ')}] }\n`,
    });
    const tooMany = await server.request('POST', `/projects/${other.project.id}/pipeline`, {
      token: other.owner.token,
      json: { ref: 'main' },
    });
    expect(tooMany.status).toBe(400);
    expect((tooMany.body as { message: { base: string[] } }).message.base.join()).toContain(
      'one job can only need 50 others, but you have listed 51',
    );
  });
});

describe('list totals', () => {
  it('follow every new, changed and deleted pipeline and job at once', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const totals = async () => {
      const read = async (path: string) => {
        const res = await server.request('GET', path, { token: owner.token });
        expect(res.status).toBe(200);
        return Number(res.headers.get('x-total'));
      };
      return {
        pipelines: await read(`/projects/${project.id}/pipelines`),
        success: await read(`/projects/${project.id}/pipelines?status=success`),
        jobs: await read(`/projects/${project.id}/jobs`),
      };
    };
    expect(await totals()).toEqual({ pipelines: 0, success: 0, jobs: 0 });
    const sha = await commit(owner.token, project, {
      '.gitlab-ci.yml': 'a: { script: x }\nb: { script: x }\n',
    });
    const pipeline = await pipelineFor(owner.token, project, sha);
    expect(await totals()).toEqual({ pipelines: 1, success: 0, jobs: 2 });
    const jobs = await jobsOf(owner.token, project, pipeline.id);
    for (const job of jobs) await run(job.id, 'running', 'success');
    expect(await totals()).toEqual({ pipelines: 1, success: 1, jobs: 2 });
    const deleted = await server.request('DELETE', `/projects/${project.id}/pipelines/${pipeline.id}`, {
      token: owner.token,
    });
    expect(deleted.status).toBe(204);
    expect(await totals()).toEqual({ pipelines: 0, success: 0, jobs: 0 });
  });
});

describe('CI/CD variables in rules', () => {
  it('reads instance and project variables (the project winning), protected ones only on protected refs', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const admin = await server.factories.user({ admin: true });
    const create = async (path: string, token: string, json: Json) => {
      const res = await server.request('POST', path, { token, json });
      expect(res.status, res.text).toBe(201);
    };
    await create('/admin/ci/variables', admin.token, { key: 'FROM_INSTANCE', value: 'instance' });
    await create(`/projects/${project.id}/variables`, owner.token, { key: 'DEPLOY', value: 'yes' });
    await create(`/projects/${project.id}/variables`, owner.token, {
      key: 'SECRET',
      value: 'x',
      protected: true,
    });
    // The project's variable wins over the instance's of the same key.
    await create('/admin/ci/variables', admin.token, { key: 'DEPLOY', value: 'no' });
    const config = [
      'always: { script: x }',
      'deploy: { script: x, rules: [{ if: \'$DEPLOY == "yes"\' }] }',
      'instance: { script: x, rules: [{ if: \'$FROM_INSTANCE == "instance"\' }] }',
      'protected-only: { script: x, rules: [{ if: $SECRET }] }',
    ].join('\n');
    const onMain = await commit(owner.token, project, { '.gitlab-ci.yml': `${config}\n` });
    const mainJobs = await jobsOf(owner.token, project, (await pipelineFor(owner.token, project, onMain)).id);
    expect(mainJobs.map((j) => j.name).sort()).toEqual(['always', 'deploy', 'instance', 'protected-only']);
    const onTopic = await commit(owner.token, project, { 'b.txt': 'b' }, { branch: 'topic', from: 'main' });
    const topicJobs = await jobsOf(
      owner.token,
      project,
      (await pipelineFor(owner.token, project, onTopic)).id,
    );
    expect(topicJobs.map((j) => j.name).sort()).toEqual(['always', 'deploy', 'instance']);
    for (const key of ['FROM_INSTANCE', 'DEPLOY']) {
      const res = await server.request('DELETE', `/admin/ci/variables/${key}`, { token: admin.token });
      expect(res.status).toBe(204);
    }
  });
});

describe('trigger jobs', () => {
  it('start a downstream pipeline where the user may, and fail with GitLab reasons otherwise', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const downstream = await server.factories.projectWithReadme({ owner });
    // Public: visible to the user, who may not run its pipelines.
    const foreign = await server.factories.ownedProjectWithReadme({ visibility: 'public' });
    const full = async (id: number) =>
      (await get(owner.token, `/projects/${id}`)).path_with_namespace as string;
    await commit(owner.token, downstream, { '.gitlab-ci.yml': 'downstream-job: { script: x }\n' });
    await commit(foreign.owner.token, foreign.project, { '.gitlab-ci.yml': 'job: { script: x }\n' });
    const sha = await commit(owner.token, project, {
      '.gitlab-ci.yml': `
allowed:
  trigger: { project: ${await full(downstream.id)}, branch: main, strategy: depend }
refused:
  trigger: { project: ${(await get(foreign.owner.token, `/projects/${foreign.project.id}`)).path_with_namespace as string} }
missing:
  trigger: { project: nobody/nothing }
`,
    });
    const pipeline = await pipelineFor(owner.token, project, sha);
    const bridges = await waitFor(
      () => get(owner.token, `/projects/${project.id}/pipelines/${pipeline.id}/bridges`),
      (list) => (list as unknown as Json[]).every((b) => b.status !== 'pending' && b.status !== 'created'),
    );
    const byBridge = Object.fromEntries((bridges as unknown as Json[]).map((b) => [b.name, b]));
    expect(byBridge.refused).toMatchObject({
      status: 'failed',
      failure_reason: 'insufficient_bridge_permissions',
    });
    expect(byBridge.missing).toMatchObject({
      status: 'failed',
      failure_reason: 'downstream_bridge_project_not_found',
    });
    expect(byBridge.allowed).toMatchObject({
      status: 'running',
      downstream_pipeline: { project_id: downstream.id },
    });
    const child = byBridge.allowed.downstream_pipeline as Json & { id: number };
    const detail = await get(owner.token, `/projects/${downstream.id}/pipelines/${child.id}`);
    expect(detail).toMatchObject({ source: 'pipeline', ref: 'main', user: { id: owner.user.id } });
    const [job] = await settle(owner.token, downstream, child.id, { 'downstream-job': 'pending' });
    await run(job.id, 'running', 'failed');
    await waitFor(
      () => get(owner.token, `/projects/${project.id}/pipelines/${pipeline.id}/bridges`),
      (list) => (list as unknown as Json[]).find((b) => b.name === 'allowed')!.status === 'failed',
    );
    expect((await get(owner.token, `/projects/${project.id}/pipelines/${pipeline.id}`)).status).toBe(
      'failed',
    );
  });

  it('refuse a child pipeline past the hierarchy size limit', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    await limit({ pipeline_hierarchy_size: 1 });
    try {
      const sha = await commit(owner.token, project, {
        '.gitlab-ci.yml': 'child: { trigger: { include: child.yml } }\n',
        'child.yml': 'inner: { script: x }\n',
      });
      const pipeline = await pipelineFor(owner.token, project, sha);
      const bridges = await waitFor(
        () => get(owner.token, `/projects/${project.id}/pipelines/${pipeline.id}/bridges`),
        (list) => (list as unknown as Json[])[0].status === 'failed',
      );
      expect((bridges as unknown as Json[])[0]).toMatchObject({
        failure_reason: 'reached_max_pipeline_hierarchy_size',
      });
    } finally {
      await limit(DEFAULT_LIMITS);
    }
  });
});
