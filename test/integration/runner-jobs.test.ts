/**
 * The runner API as GitLab Runner speaks it (through the protocol driver), job matching, long polling,
 * job tokens and their scope, git over HTTP with `gitlab-ci-token`, and the stuck job sweep.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import { useGitWorkDir } from '../helpers/git-cli.js';
import { pipelineHelpers } from '../helpers/pipelines.js';
import { RunnerDriver, type RunnerJobPayload } from '../helpers/runner-driver.js';
import { createRunner, type RunnerAttrs } from '../helpers/runner-factory.js';
import { send } from '../helpers/server.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const { commit, pipelineFor, settle } = pipelineHelpers(server);
const { gitCli } = useGitWorkDir('forge-runner-jobs-');
type Json = Record<string, unknown>;

beforeAll(() => {
  server.services.runnerJobs.longPollMs = 300;
});

/** A project of a new owner with `ci` on main, its pipeline and its jobs settled as `expected`. */
async function projectWithJobs(ci: string, expected: Record<string, string> = { build: 'pending' }) {
  const { owner, project } = await server.factories.ownedProjectWithReadme();
  const sha = await commit(owner.token, project, { '.gitlab-ci.yml': ci });
  const pipeline = await pipelineFor(owner.token, project, sha);
  const jobs = await settle(owner.token, project, pipeline.id, expected);
  return { owner, project, sha, pipeline, jobs };
}

async function runnerFor(project: Project, attrs: RunnerAttrs = {}) {
  const { runner, token } = await createRunner(server.dataSource, { projectIds: [project.id], ...attrs });
  return { runner, driver: new RunnerDriver(server.api, token) };
}

const vars = (job: RunnerJobPayload) => Object.fromEntries(job.variables.map((v) => [v.key, v.value]));

describe('POST /jobs/request', () => {
  it('answers 403 for an unknown runner token', async () => {
    const driver = new RunnerDriver(server.api, 'glrt-nope');
    expect(await driver.requestJob()).toEqual({ kind: 'forbidden' });
  });

  it('answers 204 with X-GitLab-Last-Update after holding the request when there is no job', async () => {
    const { project } = await server.factories.ownedProjectWithReadme();
    const { driver, runner } = await runnerFor(project);
    const started = Date.now();
    const outcome = await driver.requestJob();
    expect(outcome.kind).toBe('none');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(driver.lastUpdate).toMatch(/^\d+$/);
    const row = (await server.dataSource.query('SELECT contacted_at, info FROM ci_runners WHERE id = $1', [
      runner.id,
    ])) as Array<{ contacted_at: Date | null; info: Json }>;
    expect(row[0].contacted_at).not.toBeNull();
    expect(row[0].info).toMatchObject({ version: '17.7.0', system_id: 's_test' });
  });

  it("hands out GitLab's job payload and makes the job running", async () => {
    const ci = [
      'variables:',
      '  GLOBAL: g',
      'build:',
      '  before_script: [echo before]',
      '  script: [echo one, echo two]',
      '  after_script: [echo after]',
      '  timeout: 30m',
      '  variables:',
      '    JOBVAR: j',
      '  artifacts:',
      '    paths: [out/]',
      '    reports:',
      '      junit: report.xml',
      '  cache:',
      '    key: deps',
      '    paths: [node_modules/]',
      '',
    ].join('\n');
    const { owner, project, sha } = await projectWithJobs(ci);
    const vr = await server.request('POST', `/projects/${project.id}/variables`, {
      token: owner.token,
      json: { key: 'SECRET', value: 'protected-value', protected: true, masked: true },
    });
    expect(vr.status, vr.text).toBe(201);
    const { driver, runner } = await runnerFor(project);
    const job = await driver.nextJob(1);
    expect(job).not.toBeNull();
    const j = job!;
    expect(j.token).toMatch(/^glcbt-/);
    expect(j.job_info).toMatchObject({ name: 'build', stage: 'test', project_id: project.id });
    expect(j.git_info).toMatchObject({ ref: 'main', sha, ref_type: 'branch' });
    expect(j.git_info.repo_url).toContain(`gitlab-ci-token:${j.token}@`);
    expect(j.runner_info.timeout).toBe(1800);
    expect(j.steps).toEqual([
      {
        name: 'script',
        script: ['echo before', 'echo one', 'echo two'],
        timeout: 1800,
        when: 'on_success',
        allow_failure: false,
      },
      { name: 'after_script', script: ['echo after'], timeout: 1800, when: 'always', allow_failure: true },
    ]);
    const v = vars(j);
    expect(v).toMatchObject({
      CI_JOB_TOKEN: j.token,
      CI_JOB_ID: String(j.id),
      CI_PROJECT_ID: String(project.id),
      CI_COMMIT_SHA: sha,
      CI_RUNNER_ID: String(runner.id),
      GLOBAL: 'g',
      JOBVAR: 'j',
      SECRET: 'protected-value',
    });
    expect(j.variables.find((x) => x.key === 'CI_JOB_TOKEN')).toMatchObject({ public: false, masked: true });
    expect(j.artifacts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ artifact_type: 'archive', artifact_format: 'zip', paths: ['out/'] }),
        expect.objectContaining({ artifact_type: 'junit', artifact_format: 'gzip', paths: ['report.xml'] }),
      ]),
    );
    expect(j.cache).toEqual([expect.objectContaining({ key: 'deps', paths: ['node_modules/'] })]);
    const listed = await server.request('GET', `/projects/${project.id}/jobs/${j.id}`, {
      token: owner.token,
    });
    expect(listed.body).toMatchObject({ status: 'running' });
    // The job is taken: nobody else gets it.
    const other = await runnerFor(project);
    expect((await other.driver.requestJob()).kind).toBe('none');
  });

  it("orders variables as GitLab does: YAML, then project, then the pipeline's, then a manual play's", async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    await server.request('POST', `/projects/${project.id}/variables`, {
      token: owner.token,
      json: { key: 'WHO', value: 'project' },
    });
    const ci = 'variables:\n  WHO: yaml\nauto:\n  script: [x]\nmanual:\n  when: manual\n  script: [x]\n';
    await commit(owner.token, project, { '.gitlab-ci.yml': ci }, { message: 'CI [skip ci]' });
    const created = await server.request('POST', `/projects/${project.id}/pipeline`, {
      token: owner.token,
      json: { ref: 'main', variables: [{ key: 'WHO', value: 'pipeline' }] },
    });
    expect(created.status, created.text).toBe(201);
    const pipelineId = (created.body as { id: number }).id;
    const jobs = await settle(owner.token, project, pipelineId, { auto: 'pending', manual: 'manual' });
    const { driver } = await runnerFor(project);
    const who = (job: RunnerJobPayload) => job.variables.filter((v) => v.key === 'WHO').map((v) => v.value);
    expect(who((await driver.nextJob(1))!)).toEqual(['yaml', 'project', 'pipeline']);
    const manual = jobs.find((job) => job.name === 'manual')!;
    const played = await server.request('POST', `/projects/${project.id}/jobs/${manual.id}/play`, {
      token: owner.token,
      json: { job_variables_attributes: [{ key: 'WHO', value: 'manual' }] },
    });
    expect(played.status, played.text).toBe(200);
    expect(who((await driver.nextJob(1))!)).toEqual(['yaml', 'project', 'pipeline', 'manual']);
  });

  it('keeps protected variables from unprotected refs', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    await server.request('POST', `/projects/${project.id}/variables`, {
      token: owner.token,
      json: { key: 'SECRET', value: 's', protected: true },
    });
    await server.request('POST', `/projects/${project.id}/repository/branches?branch=feature&ref=main`, {
      token: owner.token,
    });
    const sha = await commit(
      owner.token,
      project,
      { '.gitlab-ci.yml': 'build:\n  script: [env]\n' },
      { branch: 'feature' },
    );
    const pipeline = await pipelineFor(owner.token, project, sha);
    await settle(owner.token, project, pipeline.id, { build: 'pending' });
    const { driver } = await runnerFor(project);
    const job = (await driver.nextJob(1))!;
    expect(vars(job).SECRET).toBeUndefined();
    expect(vars(job).CI_COMMIT_REF_PROTECTED).toBe('false');
  });
});

describe('which runner gets which job', () => {
  it('matches tags: every job tag must be among the runner tags', async () => {
    const { project } = await projectWithJobs('build:\n  tags: [linux]\n  script: [x]\n');
    expect((await (await runnerFor(project)).driver.requestJob()).kind).toBe('none');
    expect((await (await runnerFor(project, { tags: ['docker'] })).driver.requestJob()).kind).toBe('none');
    expect((await (await runnerFor(project, { tags: ['linux', 'docker'] })).driver.requestJob()).kind).toBe(
      'job',
    );
  });

  it('gives an instance runner the jobs of any project', async () => {
    const { project } = await projectWithJobs('build:\n  tags: [instance-only]\n  script: [x]\n');
    const { token } = await createRunner(server.dataSource, {
      type: 'instance_type',
      tags: ['instance-only'],
    });
    const got = await new RunnerDriver(server.api, token).requestJob();
    expect(got.kind === 'job' && got.job.job_info.project_id).toBe(project.id);
  });

  it('gives untagged jobs only to runners with run_untagged', async () => {
    const { project } = await projectWithJobs('build:\n  script: [x]\n');
    const strict = await runnerFor(project, { tags: ['linux'], runUntagged: false });
    expect((await strict.driver.requestJob()).kind).toBe('none');
    expect((await (await runnerFor(project, { tags: ['linux'] })).driver.requestJob()).kind).toBe('job');
  });

  it('gives nothing to a paused runner', async () => {
    const { project } = await projectWithJobs('build:\n  script: [x]\n');
    expect((await (await runnerFor(project, { active: false })).driver.requestJob()).kind).toBe('none');
  });

  it("gives a project runner (locked or not) only its projects' jobs", async () => {
    const { project } = await projectWithJobs('build:\n  script: [x]\n');
    const { project: elsewhere } = await server.factories.ownedProjectWithReadme();
    expect((await (await runnerFor(elsewhere, { locked: true })).driver.requestJob()).kind).toBe('none');
    expect((await (await runnerFor(project, { locked: true })).driver.requestJob()).kind).toBe('job');
  });

  it('gives a group runner the jobs of projects under its group and subgroups', async () => {
    const group = await server.factories.group();
    const sub = await server.factories.group({ parent: group });
    const owner = await server.factories.user({ admin: true });
    const project = await server.factories.projectWithReadme({ owner, namespace: sub });
    const sha = await commit(owner.token, project, { '.gitlab-ci.yml': 'build:\n  script: [x]\n' });
    const pipeline = await pipelineFor(owner.token, project, sha);
    await settle(owner.token, project, pipeline.id, { build: 'pending' });
    const other = await server.factories.group();
    const outsider = await createRunner(server.dataSource, { groupId: other.id });
    expect((await new RunnerDriver(server.api, outsider.token).requestJob()).kind).toBe('none');
    const mine = await createRunner(server.dataSource, { groupId: group.id });
    expect((await new RunnerDriver(server.api, mine.token).requestJob()).kind).toBe('job');
  });

  it('gives a ref_protected runner only jobs of protected refs', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    await server.request('POST', `/projects/${project.id}/repository/branches?branch=feature&ref=main`, {
      token: owner.token,
    });
    const sha = await commit(
      owner.token,
      project,
      { '.gitlab-ci.yml': 'build:\n  script: [x]\n' },
      { branch: 'feature' },
    );
    const pipeline = await pipelineFor(owner.token, project, sha);
    await settle(owner.token, project, pipeline.id, { build: 'pending' });
    const protectedOnly = await runnerFor(project, { accessLevel: 'ref_protected' });
    expect((await protectedOnly.driver.requestJob()).kind).toBe('none');
    const mainSha = await commit(owner.token, project, { '.gitlab-ci.yml': 'build:\n  script: [y]\n' });
    const mainPipeline = await pipelineFor(owner.token, project, mainSha);
    await settle(owner.token, project, mainPipeline.id, { build: 'pending' });
    const got = await protectedOnly.driver.requestJob();
    expect(got.kind).toBe('job');
    expect(got.kind === 'job' && got.job.git_info.ref).toBe('main');
  });

  it("caps the job's timeout with the runner's maximum_timeout", async () => {
    const { project } = await projectWithJobs('build:\n  timeout: 2h\n  script: [x]\n');
    const job = (await (await runnerFor(project, { maximumTimeout: 600 })).driver.nextJob(1))!;
    expect(job.runner_info.timeout).toBe(600);
  });
});

describe('long polling and concurrency', () => {
  it('wakes a waiting runner as soon as a job becomes pending', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const { driver } = await runnerFor(project);
    server.services.runnerJobs.longPollMs = 20_000;
    try {
      const started = Date.now();
      const waiting = driver.requestJob();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await commit(owner.token, project, { '.gitlab-ci.yml': 'build:\n  script: [x]\n' });
      const outcome = await waiting;
      expect(outcome.kind).toBe('job');
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      server.services.runnerJobs.longPollMs = 300;
    }
  });

  it('never hands one job to two runners', async () => {
    const { project } = await projectWithJobs('a:\n  script: [x]\nb:\n  script: [x]\nc:\n  script: [x]\n', {
      a: 'pending',
      b: 'pending',
      c: 'pending',
    });
    const drivers = await Promise.all(Array.from({ length: 8 }, () => runnerFor(project)));
    const outcomes = await Promise.all(drivers.map(({ driver }) => driver.requestJob()));
    const ids = outcomes.flatMap((o) => (o.kind === 'job' ? [o.job.id] : []));
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
  });
});

describe('PUT /jobs/:id and PATCH /jobs/:id/trace', () => {
  async function running(ci = "build:\n  script: [x]\n  coverage: '/Coverage: \\d+\\.\\d+%/'\n") {
    const world = await projectWithJobs(ci);
    const { driver } = await runnerFor(world.project);
    const job = (await driver.nextJob(1))!;
    return { ...world, driver, job };
  }

  it('appends the trace with Content-Range: 202 with Range, 416 to resume, 400 without the header, 403 for a bad token', async () => {
    const { driver, job, owner, project } = await running();
    const first = await driver.patchTrace(job, Buffer.from('hello '), 0);
    expect(first.status).toBe(202);
    expect(first.headers.get('range')).toBe('0-6');
    expect(first.headers.get('job-status')).toBe('running');
    // The driver did not see that PATCH: its first one is refused with 416, and it resumes at 6.
    expect(await driver.sendTrace(job, 'hello ')).toBe('ok');
    const wrong = await driver.patchTrace(job, Buffer.from('xx'), 2);
    expect(wrong.status).toBe(416);
    expect(wrong.headers.get('range')).toBe('0-6');
    const missing = await driver.patchTrace(job, Buffer.from('xx'), 6, '');
    expect(missing.status).toBe(400);
    const bad = await driver.patchTrace({ id: job.id, token: 'glcbt-wrong' }, Buffer.from('x'), 6);
    expect(bad.status).toBe(403);
    expect(await driver.sendTrace(job, 'world\n')).toBe('ok');
    const trace = await server.request('GET', `/projects/${project.id}/jobs/${job.id}/trace`, {
      token: owner.token,
    });
    expect(trace.text).toBe('hello world\n');
  });

  it('answers PUT with 200 running, 202 until the trace is complete, 412 when it is longer, 403 for another token', async () => {
    const { driver, job } = await running();
    const keepAlive = await driver.updateJob(job, { state: 'running' });
    expect(keepAlive.status).toBe(200);
    expect(keepAlive.headers.get('job-status')).toBe('running');
    expect((await driver.updateJob({ id: job.id, token: 'glcbt-other' }, { state: 'running' })).status).toBe(
      403,
    );
    await driver.sendTrace(job, 'abcdef');
    const early = await driver.updateJob(job, { state: 'success', output: { bytesize: 100 } });
    expect(early.status).toBe(202);
    expect(early.headers.get('x-gitlab-trace-update-interval')).toMatch(/^\d+$/);
    const short = await driver.updateJob(job, { state: 'success', output: { bytesize: 2 } });
    expect(short.status).toBe(412);
    expect(await driver.finish(job, 'success')).toBe('accepted');
  });

  it('finishes the job with its coverage, archives the log and stops the token', async () => {
    const { driver, job, owner, project } = await running();
    await driver.sendTrace(job, 'tests ran\nCoverage: 87.50%\ndone\n');
    expect(await driver.finish(job, 'success')).toBe('accepted');
    expect(driver.jobStatus.get(job.id)).toBe('success');
    const got = await server.request('GET', `/projects/${project.id}/jobs/${job.id}`, { token: owner.token });
    expect(got.body).toMatchObject({ status: 'success', coverage: 87.5 });
    const rows = (await server.dataSource.query(
      'SELECT trace_object, (SELECT count(*)::int FROM ci_build_trace_chunks WHERE build_id = $1) AS chunks FROM ci_builds WHERE id = $1',
      [job.id],
    )) as Array<{ trace_object: string; chunks: number }>;
    expect(rows[0]).toEqual({ trace_object: `traces/${project.id}/${job.id}/job.log`, chunks: 0 });
    const trace = await server.request('GET', `/projects/${project.id}/jobs/${job.id}/trace`, {
      token: owner.token,
    });
    expect(trace.text).toBe('tests ran\nCoverage: 87.50%\ndone\n');
    // The token no longer works.
    expect((await driver.patchTrace(job, Buffer.from('x'), 0)).status).toBe(403);
    expect((await driver.updateJob(job, { state: 'success' })).status).toBe(403);
    expect(await server.services.jobTokens.caller(job.token)).toBeNull();
    // Erasing removes the archived log.
    const erased = await server.request('POST', `/projects/${project.id}/jobs/${job.id}/erase`, {
      token: owner.token,
    });
    expect(erased.status, erased.text).toBe(201);
    const after = await server.request('GET', `/projects/${project.id}/jobs/${job.id}/trace`, {
      token: owner.token,
    });
    expect(after.text).toBe('');
  });

  it('records failure_reason and exit_code of a failed job', async () => {
    const { driver, job, owner, project } = await running();
    expect(await driver.finish(job, 'failed', { exit_code: 3, failure_reason: 'script_failure' })).toBe(
      'accepted',
    );
    const got = await server.request('GET', `/projects/${project.id}/jobs/${job.id}`, { token: owner.token });
    expect(got.body).toMatchObject({ status: 'failed', failure_reason: 'script_failure' });
  });

  it('tells the runner of a job canceled through the API to stop', async () => {
    const { driver, job, owner, project } = await running();
    const canceled = await server.request('POST', `/projects/${project.id}/jobs/${job.id}/cancel`, {
      token: owner.token,
    });
    expect(canceled.status).toBe(201);
    expect(await driver.sendTrace(job, 'more')).toBe('aborted');
    expect(await driver.finish(job, 'success')).toBe('aborted');
  });
});

describe('job tokens', () => {
  it('act as the job user on the own project, and on another only once its allowlist names the project', async () => {
    const { owner, project, driver, job } = await (async () => {
      const world = await projectWithJobs('build:\n  script: [x]\n');
      const { driver } = await runnerFor(world.project);
      return { ...world, driver, job: (await driver.nextJob(1))! };
    })();
    const other = await server.factories.projectWithReadme({ owner });
    const caller = (await server.services.jobTokens.caller(job.token))!;
    expect(caller.user?.id).toBe(owner.user.id);
    const own = await server.services.projects.find(caller, project.id);
    await expect(caller.reach!.check('project', own)).resolves.toBeUndefined();
    const target = await server.services.projects.find(caller, other.id);
    await expect(caller.reach!.check('project', target)).rejects.toMatchObject({
      status: 403,
      body: { message: expect.stringContaining('Authentication by CI/CD job token not allowed from') },
    });
    const added = await server.request('POST', `/projects/${other.id}/job_token_scope/allowlist`, {
      token: owner.token,
      json: { target_project_id: project.id },
    });
    expect(added.status, added.text).toBe(201);
    expect(added.body).toEqual({ source_project_id: other.id, target_project_id: project.id });
    await expect(caller.reach!.check('project', target)).resolves.toBeUndefined();
    await driver.finish(job, 'success');
    expect(await server.services.jobTokens.caller(job.token)).toBeNull();
  });

  it('serve the job token scope API to Maintainers', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const developer = await server.factories.memberOf(project, AccessLevel.Developer);
    const base = `/projects/${project.id}/job_token_scope`;
    expect((await server.request('GET', base, { token: developer.token })).status).toBe(403);
    const scope = await server.request('GET', base, { token: owner.token });
    expect(scope.body).toEqual({ inbound_enabled: true, outbound_enabled: false });
    expect(
      (await server.request('PATCH', base, { token: owner.token, json: { enabled: false } })).status,
    ).toBe(204);
    expect((await server.request('GET', base, { token: owner.token })).body).toMatchObject({
      inbound_enabled: false,
    });
    const other = await server.factories.projectWithReadme({ owner });
    await server.request('POST', `${base}/allowlist`, {
      token: owner.token,
      json: { target_project_id: other.id },
    });
    const again = await server.request('POST', `${base}/allowlist`, {
      token: owner.token,
      json: { target_project_id: other.id },
    });
    expect(again.status).toBe(400);
    const list = await server.request('GET', `${base}/allowlist`, { token: owner.token });
    expect((list.body as Json[]).map((p) => p.id)).toEqual([project.id, other.id].sort((a, b) => a - b));
    expect(
      (await server.request('DELETE', `${base}/allowlist/${other.id}`, { token: owner.token })).status,
    ).toBe(204);
    expect(
      (await server.request('DELETE', `${base}/allowlist/${other.id}`, { token: owner.token })).status,
    ).toBe(404);
    const group = await server.factories.group({ visibility: 'public' });
    const g = await server.request('POST', `${base}/groups_allowlist`, {
      token: owner.token,
      json: { target_group_id: group.id },
    });
    expect(g.status, g.text).toBe(201);
    expect(g.body).toEqual({ source_project_id: project.id, target_group_id: group.id });
    const groups = await server.request('GET', `${base}/groups_allowlist`, { token: owner.token });
    expect((groups.body as Json[]).map((x) => x.id)).toEqual([group.id]);
    expect(
      (await server.request('DELETE', `${base}/groups_allowlist/${group.id}`, { token: owner.token })).status,
    ).toBe(204);
  });

  it('clone the job project over HTTP as gitlab-ci-token, other projects only when allowed, never push', async () => {
    const world = await projectWithJobs('build:\n  script: [x]\n');
    const { driver } = await runnerFor(world.project);
    const job = (await driver.nextJob(1))!;
    const clone = await gitCli(['clone', '-q', job.git_info.repo_url, `own-${job.id}`]);
    expect(clone.ok, clone.stderr).toBe(true);
    const other = await server.factories.projectWithReadme({ owner: world.owner });
    const otherUrl = new URL(`${server.url}/${world.owner.user.username}/${other.path}.git`);
    const otherPath = (await server.services.projects.find(world.owner.caller, other.id)).project.namespace
      .fullPath;
    otherUrl.pathname = `/${otherPath}/${other.path}.git`;
    otherUrl.username = 'gitlab-ci-token';
    otherUrl.password = job.token;
    expect((await gitCli(['clone', '-q', otherUrl.toString(), `other-${job.id}`])).ok).toBe(false);
    await server.request('POST', `/projects/${other.id}/job_token_scope/allowlist`, {
      token: world.owner.token,
      json: { target_project_id: world.project.id },
    });
    const allowed = await gitCli(['clone', '-q', otherUrl.toString(), `other2-${job.id}`]);
    expect(allowed.ok, allowed.stderr).toBe(true);
    await driver.finish(job, 'success');
    expect((await gitCli(['clone', '-q', job.git_info.repo_url, `late-${job.id}`])).ok).toBe(false);
  });

  it('trigger multi-project pipelines with CI_JOB_TOKEN', async () => {
    const world = await projectWithJobs('build:\n  script: [x]\n');
    const { driver } = await runnerFor(world.project);
    const job = (await driver.nextJob(1))!;
    const downstream = await server.factories.projectWithReadme({ owner: world.owner });
    await commit(world.owner.token, downstream, { '.gitlab-ci.yml': 'test:\n  script: [x]\n' });
    const res = await send(`${server.api}/projects/${downstream.id}/trigger/pipeline`, 'POST', {
      json: { token: job.token, ref: 'main' },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ source: 'pipeline' });
  });
});

describe('stuck jobs', () => {
  it('fails a running job whose runner went silent past its timeout and the grace period', async () => {
    const { project, owner } = await projectWithJobs('build:\n  timeout: 1m\n  script: [x]\n');
    const { driver } = await runnerFor(project);
    const job = (await driver.nextJob(1))!;
    const service = server.services.runnerJobs;
    // Still talking: looked at again later.
    await service.sweep(job.id, new Date(Date.now() + 60_000));
    expect(
      (await server.request('GET', `/projects/${project.id}/jobs/${job.id}`, { token: owner.token })).body,
    ).toMatchObject({ status: 'running' });
    await service.sweep(job.id, new Date(Date.now() + service.stuckGraceMs + 61_000));
    const got = await server.request('GET', `/projects/${project.id}/jobs/${job.id}`, { token: owner.token });
    expect(got.body).toMatchObject({ status: 'failed', failure_reason: 'runner_system_failure' });
    expect(await driver.finish(job, 'success')).toBe('aborted');
  });

  it('leaves pending jobs no runner can take pending', async () => {
    const { project, owner, jobs } = await projectWithJobs(
      'build:\n  tags: [nobody-has-this]\n  script: [x]\n',
    );
    expect((await (await runnerFor(project)).driver.requestJob()).kind).toBe('none');
    const got = await server.request('GET', `/projects/${project.id}/jobs/${jobs[0].id}`, {
      token: owner.token,
    });
    expect(got.body).toMatchObject({ status: 'pending' });
  });
});
