/**
 * The built-in runner end to end: the real server in this process, the runner as its own process (a client
 * of the runner API only), a pushed .gitlab-ci.yml run to completion on it; masking, cancel and a runner
 * killed mid-job.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yauzl from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { pipelineHelpers, type JobJson } from '../helpers/pipelines.js';
import { useTestServer } from '../helpers/server.js';

type Json = Record<string, unknown>;
const server = useTestServer({ env: { FORGE_JOB_POLL: '0.5' } });
const { commit, pipelineFor, jobsOf } = pipelineHelpers(server);

const SECRET = 'Zq8-masked-Secret-4711';
let dir: string;
let admin: { token: string };
const runners: ChildProcess[] = [];
let runnerOutput = '';

/** Starts the runner command as `make runner` does, from the sources (tsx), against this test's server. */
function startRunner(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/runner/main.ts'], {
    env: {
      ...process.env,
      FORGE_RUNNER_URL: server.url,
      // The built-in runner's own registration, as `FORGE_BUILTIN_RUNNER=true make run` does it: an instance
      // runner created with the administrator's token, its token kept in DATA_DIR/runner/token.
      FORGE_RUNNER_TOKEN: '',
      FORGE_RUNNER_REGISTER: 'true',
      FORGE_ROOT_TOKEN: admin.token,
      FORGE_RUNNER_CONCURRENCY: '4',
      FORGE_RUNNER_UPDATE_INTERVAL: '1',
      DATA_DIR: path.join(dir, 'data'),
      FORGE_RUNNER_BUILDS_DIR: path.join(dir, 'builds'),
      FORGE_RUNNER_CACHE_DIR: path.join(dir, 'cache'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (runnerOutput += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (runnerOutput += c.toString()));
  runners.push(child);
  return child;
}

/** Reads until `done` holds or `ms` pass. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 40_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const get = async (p: string) => {
  const res = await server.request('GET', p, { token: admin.token });
  expect(res.status, res.text).toBe(200);
  return res;
};
const traceOf = async (projectId: number, jobId: number) =>
  (await get(`/projects/${projectId}/jobs/${jobId}/trace`)).text;

function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

let project: Awaited<ReturnType<typeof server.factories.project>>;

async function setUpProject() {
  project = await server.factories.project({ initialize_with_readme: true });
  const res = await server.request('POST', `/projects/${project.id}/variables`, {
    token: admin.token,
    json: { key: 'SECRET_TOKEN', value: SECRET, masked: true },
  });
  expect(res.status, res.text).toBe(201);
}

/** A commit on a branch of its own whose pipeline runs `config` (main may have a configuration or not). */
async function branchWith(branch: string, config: string) {
  const existing = await server.request(
    'GET',
    `/projects/${project.id}/repository/files/.gitlab-ci.yml?ref=main`,
    {
      token: admin.token,
    },
  );
  const action = existing.status === 200 ? 'update' : 'create';
  return commit(admin.token, project, { '.gitlab-ci.yml': config }, { branch, from: 'main', action });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-builtin-runner-'));
  server.services.runnerJobs.longPollMs = 5000;
  const user = await server.factories.user({ admin: true });
  admin = { token: user.token };
  await setUpProject();
  startRunner();
});

afterAll(async () => {
  if (process.env.RUNNER_DEBUG) fs.writeFileSync(process.env.RUNNER_DEBUG, runnerOutput);
  for (const child of runners) child.kill('SIGKILL');
  // Jobs of a runner killed with -9 leave their process groups behind: the pid files name them.
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.pid'))) {
    const pid = Number(fs.readFileSync(path.join(dir, file), 'utf8'));
    if (pid) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

const CONFIG = `
stages: [build, test, deploy]
build:
  stage: build
  script:
    - mkdir -p out
    - echo "built $CI_COMMIT_SHORT_SHA" > out/app.txt
    - printf '<testsuites><testsuite name="unit" tests="2" failures="0"><testcase classname="a" name="one"/><testcase classname="a" name="two"/></testsuite></testsuites>' > junit.xml
    - printf '%s' "\${SECRET_TOKEN:0:9}"; sleep 0.5; printf '%s\\n' "\${SECRET_TOKEN:9}"
  artifacts:
    paths: [out/, junit.xml]
    reports:
      junit: junit.xml
test:
  stage: test
  needs: [build]
  parallel:
    matrix:
      - FLAVOR: [red, blue]
  script:
    - cat out/app.txt
    - echo "flavor $FLAVOR"
flaky:
  stage: test
  needs: []
  script:
    - echo "the secret is $SECRET_TOKEN"
    - exit 42
  allow_failure:
    exit_codes: [42]
deploy-by-hand:
  stage: deploy
  script: echo deploying
  when: manual
release:
  stage: deploy
  script: echo releasing
  environment:
    name: production
    url: https://example.com
child:
  stage: deploy
  trigger:
    include: child.yml
    strategy: depend
`;

describe('the built-in runner runs a pushed pipeline', () => {
  it('runs stages, needs, a matrix, artifacts with a junit report, an allowed exit code, a manual job and a child pipeline to completion', async () => {
    const sha = await commit(admin.token, project, {
      '.gitlab-ci.yml': CONFIG,
      'child.yml': 'child-job:\n  script: echo "in the child pipeline"\n',
    });
    const pipeline = await pipelineFor(admin.token, project, sha);
    const done = await until(
      () => get(`/projects/${project.id}/pipelines/${pipeline.id}`),
      (res) => ['success', 'failed', 'canceled'].includes((res.body as Json).status as string),
      50_000,
    );
    const jobs = await jobsOf(admin.token, project, pipeline.id);
    const statuses = Object.fromEntries(jobs.map((j) => [j.name, j.status]));
    const failedTraces = await Promise.all(
      jobs.filter((j) => j.status === 'failed' && j.name !== 'flaky').map((j) => traceOf(project.id, j.id)),
    );
    expect((done.body as Json).status, `${JSON.stringify(statuses)}\n${failedTraces.join('\n')}`).toBe(
      'success',
    );
    expect(statuses).toEqual({
      build: 'success',
      'test: [red]': 'success',
      'test: [blue]': 'success',
      flaky: 'failed',
      'deploy-by-hand': 'manual',
      release: 'success',
    });
    const byName = (name: string) => jobs.find((j) => j.name === name) as JobJson;
    expect(byName('flaky').allow_failure).toBe(true);

    const buildTrace = await traceOf(project.id, byName('build').id);
    expect(buildTrace).toContain('Running with forge-api runner');
    expect(buildTrace).toContain('Getting source from Git repository');
    expect(buildTrace).toContain('Executing "step_script" stage of the job script');
    expect(buildTrace).toContain('Uploading artifacts for successful job');
    expect(buildTrace).toContain('Job succeeded');
    const redTrace = await traceOf(project.id, byName('test: [red]').id);
    expect(redTrace).toContain(`built ${sha.slice(0, 8)}`);
    expect(redTrace).toContain('flavor red');
    const flakyTrace = await traceOf(project.id, byName('flaky').id);
    expect(flakyTrace).toContain('the secret is [MASKED]');
    expect(flakyTrace).toContain('exit code 42');

    // The masked value appears in no trace, whole or split across the runner's reads.
    for (const job of jobs.filter((j) => j.status !== 'manual'))
      expect(await traceOf(project.id, job.id)).not.toContain(SECRET.slice(0, 12));
    expect(buildTrace).toContain('[MASKED]');

    // The archive, downloaded as users do.
    const zip = await fetch(`${server.api}/projects/${project.id}/jobs/${byName('build').id}/artifacts`, {
      headers: { 'PRIVATE-TOKEN': admin.token },
    });
    expect(zip.status).toBe(200);
    const names: string[] = [];
    const archive = await yauzl.fromBufferPromise(Buffer.from(await zip.arrayBuffer()));
    for await (const entry of archive.eachEntry()) names.push(entry.fileName);
    expect(names.sort()).toEqual(['junit.xml', 'out/app.txt']);

    // The child pipeline ran its job on the runner too.
    const bridges = (await get(`/projects/${project.id}/pipelines/${pipeline.id}/bridges`)).body as Json[];
    const child = (bridges[0].downstream_pipeline as Json).id as number;
    const childJobs = await jobsOf(admin.token, project, child);
    expect(childJobs.map((j) => [j.name, j.status])).toEqual([['child-job', 'success']]);
    expect(await traceOf(project.id, childJobs[0].id)).toContain('in the child pipeline');

    // A GitLab user's client reads the jobs, a trace, the test report and the environment.
    if (pythonGitlab) {
      const stdout = await runPythonClient('python_gitlab_runner_results.py', [
        server.url,
        admin.token,
        String(project.id),
        String(pipeline.id),
      ]);
      expect(JSON.parse(stdout.trim())).toEqual({
        jobs: [
          ['build', 'success'],
          ['deploy-by-hand', 'manual'],
          ['flaky', 'failed'],
          ['release', 'success'],
          ['test: [blue]', 'success'],
          ['test: [red]', 'success'],
        ],
        build_trace: true,
        build_artifacts: 'artifacts.zip',
        test_report: [2, 2, ['build']],
        test_report_summary: 2,
        environment: ['production', 'available', 'success', 'release'],
      });
    }

    // The runner registered itself as an instance runner and kept its token.
    const saved = fs.readFileSync(path.join(dir, 'data/runner/token'), 'utf8').trim();
    expect(saved).toMatch(/^glrt-/);
    expect((fs.statSync(path.join(dir, 'data/runner/token')).mode & 0o777).toString(8)).toBe('600');
    const all = (await get('/runners/all')).body as Json[];
    expect(all).toEqual([
      expect.objectContaining({
        runner_type: 'instance_type',
        description: 'forge-api built-in shell runner',
      }),
    ]);
  }, 60_000);

  it('stops a running sleep 600 within 5 s of a cancel', async () => {
    const pidFile = path.join(dir, 'cancel.pid');
    const sha = await branchWith(
      'cancel',
      `sleeper:\n  script:\n    - sleep 600 & echo $! > ${pidFile}; wait\n`,
    );
    const pipeline = await pipelineFor(admin.token, project, sha);
    await until(
      async () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '',
      (ready) => ready,
    );
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    const [job] = await jobsOf(admin.token, project, pipeline.id);
    const canceledAt = Date.now();
    const res = await server.request('POST', `/projects/${project.id}/jobs/${job.id}/cancel`, {
      token: admin.token,
    });
    expect(res.status, res.text).toBe(201);
    await until(
      async () => alive(pid),
      (running) => !running,
      5000,
    );
    expect(alive(pid)).toBe(false);
    expect(Date.now() - canceledAt).toBeLessThan(5000);
    expect(((await get(`/projects/${project.id}/jobs/${job.id}`)).body as Json).status).toBe('canceled');
  }, 30_000);

  it('leaves the job of a runner killed with -9 failed with runner_system_failure after its timeout', async () => {
    server.services.runnerJobs.stuckGraceMs = 1000;
    const pidFile = path.join(dir, 'crash.pid');
    const sha = await branchWith(
      'crash',
      `crash:\n  timeout: 3s\n  script:\n    - sleep 600 & echo $! > ${pidFile}; wait\n`,
    );
    const pipeline = await pipelineFor(admin.token, project, sha);
    await until(
      async () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '',
      (ready) => ready,
    );
    for (const child of runners) child.kill('SIGKILL');
    const [job] = await jobsOf(admin.token, project, pipeline.id);
    const failed = await until(
      () => get(`/projects/${project.id}/jobs/${job.id}`),
      (res) => (res.body as Json).status !== 'running',
      20_000,
    );
    expect(failed.body).toMatchObject({ status: 'failed', failure_reason: 'runner_system_failure' });
  }, 40_000);
});
