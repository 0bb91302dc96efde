/**
 * The CI/CD part of `make bench`: a project's pipelines and jobs seeded in SQL (for the lists and their
 * Koa + SQL floors, floor-server.mjs), then two timings on the running server:
 *
 * - `ci push`: a commit whose `.gitlab-ci.yml` makes 500 jobs (`parallel:matrix`), from the commit's
 *   answer to all 500 jobs `pending` (goal: 1 s), beside the same commit without a configuration;
 * - `ci lint`: `POST /projects/:id/ci/lint` of the 2,000-line configuration with its 20 local includes
 *   (goal: 200 ms), beside `GET /version` through the same stack.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile } from './driver.js';
import { INCLUDES, includeFile, mainFile } from './ci-config-sample.js';

export const PIPELINES_IN_PROJECT = Number(process.env.BENCH_PIPELINES ?? 20_000);
const JOBS_PER_PIPELINE = 5;
export const CI_PUSH = 'ci push';
export const CI_LINT = 'ci lint';
const PUSH_RUNS = Number(process.env.BENCH_CI_PUSHES ?? 5);
const LINT_RUNS = Number(process.env.BENCH_CI_LINTS ?? 30);

/**
 * The project's pipelines (statuses, refs and sources mixed) and five jobs each, on `sha` (a commit of the
 * repository, whose details the jobs show) or on made-up commits when the run has no repository.
 */
export function pipelinesSql(projectId: number, sha?: string): string {
  const shaSql = sha ? `'${sha}'` : "md5(g::text) || '00000000'";
  return `
    INSERT INTO ci_pipelines (project_id, iid, ref, sha, source, status, user_id, name,
        started_at, finished_at, duration, created_at, updated_at)
      SELECT ${projectId}, g, CASE WHEN g % 3 = 0 THEN 'topic-' || (g % 50) ELSE 'main' END,
        ${shaSql}, (ARRAY['push', 'api', 'web', 'schedule'])[1 + g % 4],
        (ARRAY['success', 'failed', 'running', 'pending', 'canceled', 'success'])[1 + g % 6],
        u.ids[1 + g % array_length(u.ids, 1)], NULL,
        now() - g * interval '2 minutes', now() - g * interval '1 minute', 60,
        now() - g * interval '2 minutes', now() - g * interval '1 minute'
      FROM generate_series(1, ${PIPELINES_IN_PROJECT}) g,
        (SELECT array_agg(id ORDER BY id) AS ids FROM users WHERE username <> 'root') u;
    INSERT INTO ci_builds (type, project_id, pipeline_id, name, stage, stage_idx, status, ref, sha, user_id,
        options, created_at, updated_at)
      SELECT 'build', p.project_id, p.id, 'job ' || j, 'test', 1, p.status, p.ref, p.sha, p.user_id,
        '{"script": ["make test"]}', p.created_at, p.updated_at
      FROM ci_pipelines p, generate_series(1, ${JOBS_PER_PIPELINE}) j WHERE p.project_id = ${projectId};
    INSERT INTO internal_ids (project_id, usage, last_value) VALUES (${projectId}, 'ci_pipelines', ${PIPELINES_IN_PROJECT})
      ON CONFLICT (project_id, usage) DO UPDATE SET last_value = EXCLUDED.last_value;
  `;
}

/** The lists, each beside its floor in floor-server.mjs. */
export function ciEndpoints(projectId: number) {
  const p = `/projects/${projectId}`;
  return [
    { name: 'pipelines', path: `${p}/pipelines`, floor: { kind: 'koa' as const, path: `${p}/pipelines` } },
    {
      name: 'pipelines (status+ref)',
      path: `${p}/pipelines?status=success&ref=main`,
      floor: { kind: 'koa' as const, path: `${p}/pipelines?status=success&ref=main` },
    },
    { name: 'jobs (project)', path: `${p}/jobs`, floor: { kind: 'koa' as const, path: `${p}/jobs` } },
  ];
}

interface Caller {
  call<T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<T>;
}

export interface CiRow {
  push: {
    runs: number;
    jobs: number;
    commitP50: number;
    plainCommitP50: number;
    pendingP50: number;
    pendingMax: number;
  };
  lint: { runs: number; lines: number; p50: number; p90: number; floorP50: number };
}

/** 3 jobs of a matrix in one stage: 200 + 200 + 100 = 500 jobs, all pending at once. */
function matrixConfig(run: number): string {
  const job = (name: string, a: number, b: number) =>
    [
      `${name}:`,
      '  stage: test',
      `  script: ["echo ${run}"]`,
      '  parallel:',
      '    matrix:',
      `      - A: [${Array.from({ length: a }, (_, i) => `a${i}`).join(', ')}]`,
      `        B: [${Array.from({ length: b }, (_, i) => `b${i}`).join(', ')}]`,
    ].join('\n');
  return `${[job('unit', 20, 10), job('lint', 20, 10), job('e2e', 10, 10)].join('\n')}\n`;
}

async function commitFile(api: Caller, projectId: number, branch: string, path: string, content: string) {
  const start = performance.now();
  const commit = await api.call<{ id: string }>('POST', `/projects/${projectId}/repository/commits`, {
    branch,
    commit_message: `bench ci ${path}`,
    actions: [{ action: 'update', file_path: path, content }],
  });
  return { sha: commit.id, ms: performance.now() - start };
}

async function pendingAfter(api: Caller, projectId: number, sha: string, jobs: number): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (performance.now() - start > 60_000) throw new Error(`no ${jobs} pending jobs for ${sha} after 60 s`);
    const [pipeline] = await api.call<Array<{ id: number }>>(
      'GET',
      `/projects/${projectId}/pipelines?sha=${sha}`,
    );
    if (pipeline) {
      const pending = await api.call<Array<unknown>>(
        'GET',
        `/projects/${projectId}/pipelines/${pipeline.id}/jobs?scope[]=pending&per_page=100&page=5`,
      );
      if (pending.length === jobs - 400) return performance.now() - start;
    }
    await sleep(10);
  }
}

export async function measureCi(api: Caller, projectId: number): Promise<CiRow> {
  const branch = 'bench/ci';
  await api.call('POST', `/projects/${projectId}/repository/branches?branch=${branch}&ref=main`);
  // The includes on the default branch, where a static lint reads them; the 500 jobs on a branch of their own.
  await api.call('POST', `/projects/${projectId}/repository/commits`, {
    branch: 'main',
    commit_message: 'bench ci includes',
    actions: Array.from({ length: INCLUDES }, (_, n) => ({
      action: 'create',
      file_path: `ci/part-${n}.yml`,
      content: includeFile(n),
    })),
  });
  await api.call('POST', `/projects/${projectId}/repository/commits`, {
    branch,
    commit_message: 'bench ci files',
    actions: [
      { action: 'create', file_path: 'plain.txt', content: '0\n' },
      { action: 'create', file_path: '.gitlab-ci.yml', content: matrixConfig(-1) },
    ],
  });
  await pendingAfter(
    api,
    projectId,
    (await commitFile(api, projectId, branch, '.gitlab-ci.yml', matrixConfig(0))).sha,
    500,
  );
  const commits: number[] = [];
  const plain: number[] = [];
  const pending: number[] = [];
  for (let run = 1; run <= PUSH_RUNS; run++) {
    const commit = await commitFile(api, projectId, branch, '.gitlab-ci.yml', matrixConfig(run));
    commits.push(commit.ms);
    // From the commit's answer: the push was accepted then.
    pending.push(await pendingAfter(api, projectId, commit.sha, 500));
    // The same commit API call with no pipeline to make ([ci skip]): what the push costs by itself.
    const start = performance.now();
    await api.call('POST', `/projects/${projectId}/repository/commits`, {
      branch,
      commit_message: `bench plain ${run} [ci skip]`,
      actions: [{ action: 'update', file_path: 'plain.txt', content: `${run}\n` }],
    });
    plain.push(performance.now() - start);
  }
  const lintMs: number[] = [];
  const versionMs: number[] = [];
  const content = mainFile();
  const lines =
    content.split('\n').length +
    Array.from({ length: INCLUDES }, (_, n) => includeFile(n).split('\n').length).reduce((a, b) => a + b, 0);
  for (let run = 0; run < LINT_RUNS + 3; run++) {
    let start = performance.now();
    const result = await api.call<{ valid: boolean; errors: string[] }>(
      'POST',
      `/projects/${projectId}/ci/lint`,
      {
        content,
        ref: branch,
      },
    );
    const ms = performance.now() - start;
    if (!result.valid) throw new Error(`the lint sample is invalid: ${result.errors.join('; ')}`);
    start = performance.now();
    await api.call('GET', '/version');
    // The first three warm the server up.
    if (run >= 3) {
      lintMs.push(ms);
      versionMs.push(performance.now() - start);
    }
  }
  for (const list of [commits, plain, pending, lintMs, versionMs]) list.sort((a, b) => a - b);
  return {
    push: {
      runs: PUSH_RUNS,
      jobs: 500,
      commitP50: percentile(commits, 50),
      plainCommitP50: percentile(plain, 50),
      pendingP50: percentile(pending, 50),
      pendingMax: pending[pending.length - 1] ?? NaN,
    },
    lint: {
      runs: LINT_RUNS,
      lines,
      p50: percentile(lintMs, 50),
      p90: percentile(lintMs, 90),
      floorP50: percentile(versionMs, 50),
    },
  };
}

export function ciTable(row: CiRow): string {
  const ms = (n: number) => `${n.toFixed(0)} ms`;
  return [
    `${CI_PUSH}: ${row.push.runs} commits whose .gitlab-ci.yml makes ${row.push.jobs} jobs (parallel:matrix)`,
    `  all ${row.push.jobs} jobs pending after the commit answered: p50 ${ms(row.push.pendingP50)}, max ${ms(row.push.pendingMax)} (goal 1 s)`,
    `  the commit itself: p50 ${ms(row.push.commitP50)}; floor, the same commit with [ci skip]: p50 ${ms(row.push.plainCommitP50)}`,
    `${CI_LINT}: POST /projects/:id/ci/lint of ${row.lint.lines} lines with ${INCLUDES} local includes, ${row.lint.runs} runs`,
    `  p50 ${ms(row.lint.p50)}, p90 ${ms(row.lint.p90)} (goal 200 ms); floor, GET /version: p50 ${row.lint.floorP50.toFixed(1)} ms`,
  ].join('\n');
}
