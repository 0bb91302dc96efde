/**
 * `make bench`: starts the built server on a fresh database and data directory, seeds a realistic
 * dataset through the API and a git push, then measures each endpoint as a Developer member beside its
 * floor (the git command, or bare Koa + SQL, that answers the same question) in the same run.
 *
 * A benchmark, not a test: it never fails on a number. It exits non-zero only when the harness breaks.
 * Everything talks to 127.0.0.1; every loop is bounded in requests and time.
 *
 * Env: BENCH_RATE (offered req/s, default 20), BENCH_OPEN_SECONDS (5), BENCH_MAX_SECONDS (3),
 * BENCH_CONNECTIONS (closed-loop connections, 4), BENCH_PG_URL (an administrative PostgreSQL URL,
 * default postgres://postgres@127.0.0.1:5432/postgres; when it does not answer, PGlite is used),
 * BENCH_DATABASE=pglite (force PGlite), BENCH_OUT (JSON report, .forge-test/bench.json),
 * BENCH_SEED_CONCURRENCY (parallel seeding calls, 8); BENCH_PROJECTS and BENCH_USERS shrink the
 * dataset to try the harness quickly; BENCH_ENDPOINTS (endpoint names separated by a comma without a
 * space after it, e.g. `user,tree, root`) measures only those, and skips the repository when none of
 * them reads it;
 * BENCH_DIST (the compiled server to measure, default dist; another build, to compare two versions in one
 * checkout); BENCH_NODE_ARGS adds flags to the server's node (`--cpu-prof --cpu-prof-dir=<dir>` profiles it);
 * BENCH_WARMUP (sequential requests before an endpoint is measured, 200, in 3 s at most);
 * BENCH_KEEP_DATABASE=1 leaves the PostgreSQL database in place and prints its URL, to inspect plans.
 * Unless BENCH_ENDPOINTS leaves it out, the run ends with the embedded default's start (`embedded boot`,
 * which BENCH_ENDPOINTS may name alone).
 *
 * Endpoints named `(cold)` (cold.ts) ask about a different object in every request, so that no cache
 * answers them; their git floor runs the same command for each of those objects.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { bootTable, measureEmbeddedBoot, type BootRow } from './boot.js';
import {
  closedLoop,
  openLoop,
  percentile,
  pool,
  type ClosedLoopResult,
  type OpenLoopResult,
} from './driver.js';
import { gitEnv } from '../../src/git/git.js';
import { coldEndpoints, cycle, mainLine } from './cold.js';
import { gitFloor, gitFloorEach, type GitFloor } from './floors.js';
import {
  commitFloor,
  gitProbeLine,
  PROBE_FILE,
  readGitProbe,
  type CommitFloor,
  type GitSpawnProbe,
} from './git-spawn.js';
import { CI_LINT, CI_PUSH, ciEndpoints, ciTable, measureCi, pipelinesSql, type CiRow } from './ci.js';
import { cpuByProcess, cpuMs, spawnCount } from './proc.js';
import { buildRepository, DEFAULT_SHAPE, random, tagName } from './repo.js';

const env = process.env;
const settings = {
  rate: Number(env.BENCH_RATE ?? 20),
  openSeconds: Number(env.BENCH_OPEN_SECONDS ?? 5),
  maxSeconds: Number(env.BENCH_MAX_SECONDS ?? 3),
  connections: Number(env.BENCH_CONNECTIONS ?? 4),
  drainMs: 5_000,
  settleMs: 30_000,
  // Enough requests for V8 to have compiled the endpoint's code: the figures are the warm server's.
  warmup: Number(env.BENCH_WARMUP ?? 200),
  warmupMs: 3_000,
  floorInvocations: 20,
  floorSerialMs: 1_500,
  floorSeconds: 2,
};
const DATASET = {
  groups: 50,
  // Smaller only to try the harness quickly; the figures quoted are from the default.
  projects: Number(env.BENCH_PROJECTS ?? 2_000),
  users: Number(env.BENCH_USERS ?? 200),
  groupsPerUser: 3,
  projectsPerUser: 2,
  snippets: 40,
  userLists: 40,
};
const SEED_CONCURRENCY = Number(env.BENCH_SEED_CONCURRENCY ?? 8);
// Names hold ", " (`tree, root`): only a comma without a space after it separates them.
const SELECTED = env.BENCH_ENDPOINTS?.split(/,(?! )/)
  .map((name) => name.trim())
  .filter(Boolean);
/** Not an endpoint: the embedded default's start (boot.ts), measured last. */
const BOOT = 'embedded boot';
const MEASURES_BOOT = !SELECTED || SELECTED.includes(BOOT);
const BOOT_ONLY = SELECTED !== undefined && SELECTED.every((name) => name === BOOT);
/** A write, measured apart from the reads: commits through the API, one after another. */
const COMMITS = 'commit create';
const MEASURES_COMMITS = !SELECTED || SELECTED.includes(COMMITS);
const COMMIT_COUNT = Number(env.BENCH_COMMITS ?? 100);
const MEASURES_CI = !SELECTED || SELECTED.includes(CI_PUSH) || SELECTED.includes(CI_LINT);
const ROOT = path.resolve(import.meta.dirname, '../..');
const OUT = path.resolve(ROOT, env.BENCH_OUT ?? '.forge-test/bench.json');
const DIST = path.resolve(ROOT, env.BENCH_DIST ?? 'dist');

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

// ---------- the server and its database ----------

interface Database {
  kind: 'postgresql' | 'pglite';
  url?: string;
  drop(): Promise<void>;
}

async function freshDatabase(): Promise<Database> {
  const adminUrl = env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (env.BENCH_DATABASE !== 'pglite') {
    const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
    try {
      await admin.connect();
      const name = `forge_bench_${process.pid}_${Date.now()}`;
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return {
        kind: 'postgresql',
        url: url.toString(),
        async drop() {
          const client = new pg.Client({ connectionString: adminUrl });
          await client.connect();
          await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          await client.end();
        },
      };
    } catch {
      await admin.end().catch(() => {});
      log(`no PostgreSQL at ${new URL(adminUrl).host}; using embedded PGlite`);
    }
  }
  return { kind: 'pglite', drop: async () => {} };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

interface Server {
  child: ChildProcess;
  pid: number;
  url: string;
  spawnFile: string;
}

async function startServer(
  database: Database,
  dataDir: string,
  rootToken: string,
  port: number,
): Promise<Server> {
  const url = `http://127.0.0.1:${port}`;
  const spawnFile = path.join(dataDir, 'spawns');
  const logFile = fs.openSync(path.join(dataDir, 'server.log'), 'a');
  const child = spawn(
    process.execPath,
    [
      // Extra flags for the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it.
      ...(env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      '--import',
      pathToFileURL(path.join(ROOT, 'scripts/bench/spawn-counter.mjs')).href,
      '--import',
      pathToFileURL(path.join(ROOT, 'scripts/bench/git-spawn-probe.mjs')).href,
      path.join(DIST, 'src/main.js'),
    ],
    {
      cwd: ROOT,
      env: {
        PATH: env.PATH,
        HOME: env.HOME,
        PORT: String(port),
        HOST: '127.0.0.1',
        EXTERNAL_URL: url,
        DATA_DIR: dataDir,
        ...(database.url ? { DATABASE_URL: database.url } : {}),
        FORGE_ROOT_TOKEN: rootToken,
        LOG_LEVEL: 'warn',
        BENCH_SPAWN_FILE: spawnFile,
        BENCH_GIT_PROBE_FILE: path.join(dataDir, PROBE_FILE),
        ...(env.BENCH_SPAWN_LOG ? { BENCH_SPAWN_LOG: env.BENCH_SPAWN_LOG } : {}),
      },
      stdio: ['ignore', logFile, logFile],
    },
  );
  fs.closeSync(logFile);
  let exited = false;
  child.on('exit', () => (exited = true));
  const deadline = performance.now() + 90_000;
  while (performance.now() < deadline && !exited) {
    try {
      if ((await fetch(`${url}/-/readiness`)).ok) return { child, pid: child.pid!, url, spawnFile };
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`the server did not become ready; see ${path.join(dataDir, 'server.log')}`);
}

async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
}

/** Runs SQL on the benchmark's database: directly on PostgreSQL; on PGlite, with the server stopped. */
async function withDatabase(database: Database, dataDir: string, sql: string): Promise<void> {
  if (database.url) {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query(sql);
    await client.end();
    return;
  }
  const { openPGlite } = (await import(path.join(DIST, 'src/db/pglite-driver.js'))) as {
    openPGlite(dir: string): Promise<{ exec(sql: string): Promise<unknown>; close(): Promise<void> }>;
  };
  const db = await openPGlite(path.join(dataDir, 'pglite'));
  await db.exec(sql);
  await db.close();
}

// ---------- seeding through the API ----------

class Api {
  constructor(
    readonly base: string,
    readonly token: string,
  ) {}

  async call<T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${this.base}/api/v4${route}`, {
        method,
        headers: { 'PRIVATE-TOKEN': this.token, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (response.ok) return JSON.parse(text) as T;
      // A seeding call that fails is a broken harness, except a transient 5xx, retried twice.
      if (response.status < 500 || attempt >= 3)
        throw new Error(`${method} ${route} answered ${response.status}: ${text.slice(0, 300)}`);
    }
  }
}

interface Seeded {
  member: { id: number; username: string; token: string };
  project: { id: number; path: string };
  /** A snippet of the benchmark's project, for the raw read. */
  snippetId: number;
  counts: Record<string, number>;
  timings: Record<string, number>;
  /** CPU milliseconds the server spent on each seeding step. */
  serverCpu: Record<string, number>;
}

const LEVELS = [10, 20, 30, 40, 50];
const groupVisibility = (g: number) => (g % 10 === 0 ? 'public' : g % 10 <= 3 ? 'internal' : 'private');
function projectVisibility(group: string, r: number): string {
  if (group === 'private') return 'private';
  if (group === 'internal') return r < 0.7 ? 'internal' : 'private';
  return r < 0.5 ? 'public' : r < 0.8 ? 'internal' : 'private';
}

async function seed(api: Api, serverPid: number): Promise<Seeded> {
  const rnd = random(7);
  const timings: Record<string, number> = {};
  const serverCpu: Record<string, number> = {};
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    const cpu = cpuMs(serverPid);
    const result = await fn();
    timings[name] = Math.round(performance.now() - start);
    serverCpu[name] = Math.round(cpuMs(serverPid) - cpu);
    log(`seeded ${name} in ${seconds(start)} (server CPU ${(serverCpu[name] / 1000).toFixed(1)} s)`);
    return result;
  };

  const groups = await step('groups', () =>
    pool(
      Array.from({ length: DATASET.groups }, (_, g) => g),
      SEED_CONCURRENCY,
      async (g) => {
        const path = `group-${String(g).padStart(2, '0')}`;
        const group = await api.call<{ id: number }>('POST', '/groups', {
          name: path,
          path,
          visibility: groupVisibility(g),
        });
        return { id: group.id, path, visibility: groupVisibility(g) };
      },
    ),
  );

  const users = await step('users', () =>
    pool(
      Array.from({ length: DATASET.users }, (_, u) => u),
      SEED_CONCURRENCY,
      async (u) => {
        const username = u === 0 ? 'bench-developer' : `user-${String(u).padStart(3, '0')}`;
        const user = await api.call<{ id: number }>('POST', '/users', {
          username,
          name: username,
          email: `${username}@example.com`,
          force_random_password: true,
          skip_confirmation: true,
        });
        return { id: user.id, username };
      },
    ),
  );

  const tokens = await step('tokens', () =>
    pool(users, SEED_CONCURRENCY, async (user) => {
      const token = await api.call<{ token: string }>('POST', `/users/${user.id}/personal_access_tokens`, {
        name: 'bench',
        scopes: ['api'],
      });
      return token.token;
    }),
  );

  // Projects: 40 in each group; the first project of group-00 holds the benchmark repository.
  const perGroup = DATASET.projects / DATASET.groups;
  const projects = await step('projects', () =>
    pool(
      Array.from({ length: DATASET.projects }, (_, i) => i),
      SEED_CONCURRENCY,
      async (i) => {
        const group = groups[Math.floor(i / perGroup)];
        const path = i === 0 ? 'monorepo' : `project-${String(i).padStart(4, '0')}`;
        const project = await api.call<{ id: number }>('POST', '/projects', {
          name: path,
          path,
          namespace_id: group.id,
          visibility: i === 0 ? 'private' : projectVisibility(group.visibility, rnd()),
        });
        return { id: project.id, path: `${group.path}/${path}`, groupIndex: Math.floor(i / perGroup) };
      },
    ),
  );

  // Memberships: the benchmark's member is a Developer in group-00 (the repository's group) and four
  // more, and a Reporter of a few projects elsewhere; every other user joins a few groups and projects.
  const groupMembers: { group: number; user: number; level: number }[] = [];
  const projectMembers: { project: number; user: number; level: number }[] = [];
  for (const g of [0, 4, 11, 25, 37])
    groupMembers.push({ group: groups[g].id, user: users[0].id, level: 30 });
  for (let p = 0; p < 5; p++)
    projectMembers.push({
      project: projects[30 * perGroup + 1 + p * perGroup].id,
      user: users[0].id,
      level: 20,
    });
  for (const user of users.slice(1)) {
    const chosen = new Set<number>();
    while (chosen.size < DATASET.groupsPerUser) chosen.add(Math.floor(rnd() * groups.length));
    for (const g of chosen)
      groupMembers.push({ group: groups[g].id, user: user.id, level: LEVELS[Math.floor(rnd() * 5)] });
    // GitLab refuses a project role below one inherited from the group: only projects of other groups.
    const projectsChosen = new Set<number>();
    while (projectsChosen.size < DATASET.projectsPerUser) {
      const p = 1 + Math.floor(rnd() * (projects.length - 1));
      if (!chosen.has(projects[p].groupIndex)) projectsChosen.add(p);
    }
    for (const p of projectsChosen) {
      projectMembers.push({ project: projects[p].id, user: user.id, level: LEVELS[Math.floor(rnd() * 4)] });
    }
  }
  await step('members', async () => {
    await pool(groupMembers, SEED_CONCURRENCY, (m) =>
      api.call('POST', `/groups/${m.group}/members`, { user_id: m.user, access_level: m.level }),
    );
    await pool(projectMembers, SEED_CONCURRENCY, (m) =>
      api.call('POST', `/projects/${m.project}/members`, { user_id: m.user, access_level: m.level }),
    );
  });

  // Review and delivery state of the benchmark's project: snippets (each its own repository), feature
  // flag user lists, and an approval rule that every merge request's approval state reads.
  const monorepo = `/projects/${projects[0].id}`;
  const snippets = await step('snippets', () =>
    pool(
      Array.from({ length: DATASET.snippets }, (_, s) => s),
      SEED_CONCURRENCY,
      async (s) =>
        (
          await api.call<{ id: number }>('POST', `${monorepo}/snippets`, {
            title: `Snippet ${s}`,
            visibility: 'private',
            files: [
              { file_path: 'main.ts', content: `export const n = ${s};\n`.repeat(50) },
              { file_path: 'README.md', content: `# Snippet ${s}\n` },
            ],
          })
        ).id,
    ),
  );
  await step('user lists and approval rule', async () => {
    await pool(
      Array.from({ length: DATASET.userLists }, (_, l) => l),
      SEED_CONCURRENCY,
      (l) =>
        api.call('POST', `${monorepo}/feature_flags_user_lists`, {
          name: `list-${l}`,
          user_xids: Array.from({ length: 20 }, (_, u) => `user-${l}-${u}`).join(','),
        }),
    );
    await api.call('POST', `${monorepo}/approval_rules`, {
      name: 'Reviewers',
      approvals_required: 2,
      user_ids: [users[0].id],
    });
  });

  return {
    member: { id: users[0].id, username: users[0].username, token: tokens[0] },
    project: { id: projects[0].id, path: projects[0].path },
    snippetId: snippets[0],
    counts: {
      groups: groups.length,
      users: users.length,
      tokens: tokens.length,
      projects: projects.length,
      group_members: groupMembers.length,
      project_members: projectMembers.length,
    },
    timings,
    serverCpu,
  };
}

/**
 * Merge requests, written straight into the tables (the API would take minutes for this many):
 * MERGE_REQUESTS_IN_PROJECT in the benchmark's project, a few in every other project; every seventh by
 * the member, a third with an assignee, a quarter open, the rest closed or merged; in the benchmark's
 * project every fifth has the label `bug`, every second `backend`.
 */
const MERGE_REQUESTS_IN_PROJECT = Number(env.BENCH_MERGE_REQUESTS ?? 100_000);
const MERGE_REQUESTS_ELSEWHERE = 5;

function mergeRequestsSql(seeded: Seeded): string {
  const project = seeded.project.id;
  const member = seeded.member.id;
  const columns = `iid, target_project_id, source_project_id, source_branch, target_branch, title, description,
    state, author_id, merge_user_id, merged_at, closed_at, head_sha, merge_status, created_at, updated_at`;
  const row = (projectSql: string) => `g, ${projectSql}, ${projectSql}, 'topic-' || g, 'main',
    'Merge request ' || g, 'Changes ' || g || E'\n\n- [x] code\n- [ ] docs',
    (ARRAY['opened', 'closed', 'merged', 'merged'])[1 + g % 4],
    CASE WHEN g % 7 = 0 THEN ${member} ELSE u.ids[1 + g % array_length(u.ids, 1)] END,
    CASE WHEN g % 4 >= 2 THEN u.ids[1 + (g * 3) % array_length(u.ids, 1)] END,
    CASE WHEN g % 4 >= 2 THEN now() - g * interval '1 minute' END,
    CASE WHEN g % 4 = 1 THEN now() - g * interval '1 minute' END,
    md5(g::text) || '00000000', 'can_be_merged',
    now() - g * interval '2 minutes', now() - g * interval '1 minute'`;
  const users = `(SELECT array_agg(id ORDER BY id) AS ids FROM users WHERE username <> 'root') u`;
  return `
    INSERT INTO merge_requests (${columns})
      SELECT ${row(String(project))} FROM generate_series(1, ${MERGE_REQUESTS_IN_PROJECT}) g, ${users};
    INSERT INTO merge_requests (${columns})
      SELECT ${row('p.id')} FROM projects p, generate_series(1, ${MERGE_REQUESTS_ELSEWHERE}) g, ${users}
      WHERE p.id <> ${project};
    INSERT INTO merge_request_assignees (merge_request_id, user_id)
      SELECT mr.id, mr.merge_user_id FROM merge_requests mr WHERE mr.iid % 3 = 0 AND mr.merge_user_id IS NOT NULL;
    INSERT INTO labels (title, color, project_id) VALUES ('bug', '#d9534f', ${project}), ('backend', '#6699cc', ${project});
    INSERT INTO merge_request_labels (merge_request_id, label_id)
      SELECT mr.id, l.id FROM merge_requests mr JOIN labels l ON l.project_id = mr.target_project_id
      WHERE mr.target_project_id = ${project}
        AND ((l.title = 'bug' AND mr.iid % 5 = 0) OR (l.title = 'backend' AND mr.iid % 2 = 0));
    INSERT INTO internal_ids (project_id, usage, last_value)
      SELECT target_project_id, 'merge_requests', max(iid) FROM merge_requests GROUP BY target_project_id
      ON CONFLICT (project_id, usage) DO UPDATE SET last_value = EXCLUDED.last_value;
  `;
}

function gitPush(remote: string, repo: string, args: string[]): void {
  execFileSync('git', [`--git-dir=${repo}`, 'push', '--quiet', remote, ...args], {
    env: gitEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
}

// ---------- measuring ----------

interface Endpoint {
  name: string;
  path: string;
  /** Cold mode: a different path for each request, in order; `path` is then the first. */
  paths?: string[];
  floor:
    | { kind: 'git'; args: string[]; each?: { argsList: string[][]; command: string } }
    | { kind: 'koa'; path: string }
    | { kind: 'none' };
}

interface Cost {
  cpuMs: number;
  spawns: number;
  /** cpuMs by where it went (proc.ts cpuByProcess): the server, its long-lived helpers, exited git. */
  byProcess: Record<string, number>;
}

interface Row {
  endpoint: string;
  path: string;
  open: OpenLoopResult;
  max: ClosedLoopResult;
  cost: Cost;
  warmupStatus: number;
  floor?: { command: string; p50: number; throughput: number; cpuMs: number };
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/**
 * Requests first, bounded in number and time, so that compiling the endpoint's code is not counted as
 * its cost; the first one's latency is reported, and the last status tells whether the path works.
 */
async function warmup(
  url: string,
  token: string | undefined,
  next?: () => string,
): Promise<{ status: number; body: string; firstMs: number }> {
  let last = { status: 0, body: '', firstMs: NaN };
  const end = performance.now() + settings.warmupMs;
  for (let i = 0; i < settings.warmup && performance.now() < end; i++) {
    const start = performance.now();
    const response = await fetch(next ? next() : url, { headers: token ? { 'PRIVATE-TOKEN': token } : {} });
    last = {
      status: response.status,
      body: await response.text(),
      firstMs: i === 0 ? performance.now() - start : last.firstMs,
    };
    if (!response.ok) break;
  }
  return last;
}

/**
 * The closed loop first, with the process's CPU and spawns around it, on an idle server; then the
 * open loop at the fixed rate, waiting (bounded) until the server has answered what it was given.
 */
async function measure(
  url: string,
  token: string | undefined,
  pid: number,
  spawnFile: string | undefined,
  /** Cold mode: the URL of each request (warm-up included), a different one every time. */
  next?: () => string,
): Promise<{ open: OpenLoopResult; max: ClosedLoopResult; cost: Cost; warmupStatus: number }> {
  const headers: Record<string, string> = token ? { 'PRIVATE-TOKEN': token } : {};
  const target = { url, headers, next };
  const first = await warmup(url, token, next);
  if (first.status !== 200) log(`warning: ${url} answered ${first.status}: ${first.body.slice(0, 200)}`);
  // The first request meets cold caches: its latency shows what a cache miss costs.
  log(`first request ${fmt(first.firstMs, 1)} ms: ${url}`);
  const splitBefore = cpuByProcess(pid);
  const cpuBefore = cpuMs(pid);
  const spawnsBefore = spawnFile ? await spawnCount(pid, spawnFile) : NaN;
  const max = await closedLoop(target, { connections: settings.connections, seconds: settings.maxSeconds });
  const cpuAfter = cpuMs(pid);
  const splitAfter = cpuByProcess(pid);
  const spawnsAfter = spawnFile ? await spawnCount(pid, spawnFile) : NaN;
  const byProcess: Record<string, number> = {};
  for (const name of Object.keys(splitAfter))
    byProcess[name] = (splitAfter[name] - (splitBefore[name] ?? 0)) / max.completed;
  const cost = {
    cpuMs: (cpuAfter - cpuBefore) / max.completed,
    spawns: (spawnsAfter - spawnsBefore) / max.completed,
    byProcess,
  };
  const { settled, ...open } = await openLoop(target, {
    rate: settings.rate,
    seconds: settings.openSeconds,
    drainMs: settings.drainMs,
  });
  await Promise.race([settled, sleep(settings.settleMs)]);
  return { open, max, cost, warmupStatus: first.status };
}

function endpoints(
  projectId: number,
  blobSha: string,
  compareFrom: string,
  memberId = 0,
  snippetId = 0,
  /** Main's commits, newest first, for the cold endpoints; none when only their names are needed. */
  commits: string[] = [],
): Endpoint[] {
  const p = `/projects/${projectId}`;
  const filtered = `${p}/merge_requests?state=opened&author_id=${memberId}`;
  const labelled = `${p}/merge_requests?labels=bug&state=opened&author_id=${memberId}`;
  const file = 'src/mod42/file042.ts';
  const listRefs = '%(refname) %(objectname) %(*objectname) %(creatordate:iso-strict) %(subject)';
  return [
    { name: 'user', path: '/user', floor: { kind: 'koa', path: '/user' } },
    { name: 'projects (visible)', path: '/projects', floor: { kind: 'koa', path: '/projects' } },
    {
      name: 'projects (membership)',
      path: '/projects?membership=true',
      floor: { kind: 'koa', path: '/projects?membership=true' },
    },
    { name: 'project get', path: p, floor: { kind: 'koa', path: p } },
    {
      name: 'merge requests (project)',
      path: `${p}/merge_requests`,
      floor: { kind: 'koa', path: `${p}/merge_requests` },
    },
    {
      name: 'merge requests (all)',
      path: '/merge_requests?scope=all',
      floor: { kind: 'koa', path: '/merge_requests?scope=all' },
    },
    { name: 'merge requests (state+author)', path: filtered, floor: { kind: 'koa', path: filtered } },
    {
      name: 'merge requests (labels+state+author)',
      path: labelled,
      floor: { kind: 'koa', path: labelled },
    },
    {
      name: 'merge request approval state',
      path: `${p}/merge_requests/1/approval_state`,
      floor: { kind: 'none' },
    },
    { name: 'project snippets', path: `${p}/snippets`, floor: { kind: 'none' } },
    { name: 'snippet raw', path: `${p}/snippets/${snippetId}/raw`, floor: { kind: 'none' } },
    { name: 'feature flag user lists', path: `${p}/feature_flags_user_lists`, floor: { kind: 'none' } },
    { name: 'tree, root', path: `${p}/repository/tree`, floor: { kind: 'git', args: ['ls-tree', 'main'] } },
    {
      name: 'tree, directory',
      path: `${p}/repository/tree?path=src/mod42`,
      floor: { kind: 'git', args: ['ls-tree', 'main:src/mod42'] },
    },
    {
      name: 'tree, recursive p5',
      path: `${p}/repository/tree?recursive=true&per_page=100&page=5`,
      floor: { kind: 'git', args: ['ls-tree', '-r', '-t', 'main'] },
    },
    {
      name: 'blob',
      path: `${p}/repository/blobs/${blobSha}`,
      floor: { kind: 'git', args: ['cat-file', '-p', blobSha] },
    },
    {
      name: 'raw file',
      path: `${p}/repository/files/${encodeURIComponent(file)}/raw?ref=main`,
      floor: { kind: 'git', args: ['cat-file', '-p', `main:${file}`] },
    },
    {
      name: 'tags',
      path: `${p}/repository/tags`,
      floor: {
        kind: 'git',
        args: ['for-each-ref', '--count=20', '--sort=-creatordate', `--format=${listRefs}`, 'refs/tags/'],
      },
    },
    {
      name: 'branches',
      path: `${p}/repository/branches`,
      floor: {
        kind: 'git',
        args: ['for-each-ref', '--count=20', '--sort=refname', `--format=${listRefs}`, 'refs/heads/'],
      },
    },
    {
      name: 'commits',
      path: `${p}/repository/commits?ref_name=main`,
      floor: { kind: 'git', args: ['log', '-n', '20', '--format=%H %P %an %ae %at %cn %ce %ct %s', 'main'] },
    },
    {
      name: 'compare',
      path: `${p}/repository/compare?from=${compareFrom}&to=main`,
      floor: { kind: 'git', args: ['diff', compareFrom, 'main'] },
    },
    ...coldEndpoints(projectId, commits, DEFAULT_SHAPE).map((cold): Endpoint => ({
      name: cold.name,
      path: cold.paths[0] ?? '',
      paths: cold.paths,
      floor: {
        kind: 'git',
        args: cold.floors[0] ?? [],
        each: { argsList: cold.floors, command: cold.floorCommand },
      },
    })),
    ...ciEndpoints(projectId),
  ];
}

/** The endpoints BENCH_ENDPOINTS names, or all of them; an unknown name breaks the harness. */
function selected(list: Endpoint[]): Endpoint[] {
  if (!SELECTED) return list;
  const unknown = SELECTED.filter(
    (name) => ![BOOT, COMMITS, CI_PUSH, CI_LINT].includes(name) && !list.some((e) => e.name === name),
  );
  if (unknown.length > 0)
    throw new Error(
      `BENCH_ENDPOINTS: unknown ${unknown.join(', ')}; known: ${list.map((e) => e.name).join(', ')}`,
    );
  return list.filter((e) => SELECTED.includes(e.name));
}

async function startFloorServer(database: Database, dataDir: string, callerId: number) {
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts/bench/floor-server.mjs')], {
    cwd: ROOT,
    env: {
      PATH: env.PATH,
      PORT: '0',
      BENCH_CALLER_ID: String(callerId),
      ...(database.url ? { DATABASE_URL: database.url } : { PGLITE_DIR: path.join(dataDir, 'pglite') }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', (code) => reject(new Error(`the floor server exited (${code})`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

interface CommitRow {
  commits: number;
  p50: number;
  p90: number;
  cpuMs: number;
  spawns: number;
  git?: GitSpawnProbe;
  floor?: CommitFloor;
}

/**
 * `POST /projects/:id/repository/commits` changing one file of the 10,000-file repository, one commit
 * after another on a branch of its own, as an editor saving would. CPU and spawns are the server's
 * (git included) from the first request until its queue has settled after the last.
 */
async function measureCommits(
  api: Api,
  projectId: number,
  server: { pid: number; spawnFile?: string },
): Promise<CommitRow> {
  const branch = 'bench/writes';
  await api.call(
    'POST',
    `/projects/${projectId}/repository/branches?branch=${encodeURIComponent(branch)}&ref=main`,
  );
  const commit = (i: number) =>
    api.call('POST', `/projects/${projectId}/repository/commits`, {
      branch,
      commit_message: `bench write ${i}`,
      actions: [
        { action: 'update', file_path: 'src/mod42/file042.ts', content: `export const written = ${i};\n` },
      ],
    });
  for (let i = 0; i < 5; i++) await commit(-i - 1);
  const cpuBefore = cpuMs(server.pid);
  const spawnsBefore = server.spawnFile ? await spawnCount(server.pid, server.spawnFile) : NaN;
  const latencies: number[] = [];
  for (let i = 0; i < COMMIT_COUNT; i++) {
    const start = performance.now();
    await commit(i);
    latencies.push(performance.now() - start);
  }
  // Work after the push (merge request refresh, housekeeping) runs on the queue: let it finish.
  await sleep(3_000);
  const spawnsAfter = server.spawnFile ? await spawnCount(server.pid, server.spawnFile) : NaN;
  const cpuAfter = cpuMs(server.pid);
  latencies.sort((a, b) => a - b);
  return {
    commits: COMMIT_COUNT,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    cpuMs: (cpuAfter - cpuBefore) / COMMIT_COUNT,
    spawns: (spawnsAfter - spawnsBefore) / COMMIT_COUNT,
    git: server.spawnFile ? await readGitProbe(server.spawnFile) : undefined,
  };
}

function commitTable(row: CommitRow): string {
  return [
    `commit create: ${row.commits} commits changing one file, one at a time`,
    `  p50 ${fmt(row.p50)} ms, p90 ${fmt(row.p90)} ms; per commit ${fmt(row.cpuMs, 2)} ms of CPU and ` +
      `${fmt(row.spawns, 1)} git processes, the work after the push included`,
    ...(row.git ? [gitProbeLine(row.git)] : []),
    ...(row.floor ? [`  floor p50 ${fmt(row.floor.p50)} ms: ${row.floor.command}`] : []),
  ].join('\n');
}

// ---------- report ----------

function table(rows: Row[]): string {
  const header = [
    'endpoint',
    'p50 ms',
    'p90 ms',
    'p99 ms',
    'err',
    'late',
    'max req/s',
    'CPU ms/req',
    'spawns/req',
    'floor p50',
    'floor req/s',
    'floor CPU',
    'CPU ÷ floor',
    'req/s of floor',
  ];
  const lines = rows.map((r) => {
    const errors = r.open.errors + r.max.errors;
    const overloaded = r.max.throughput < settings.rate ? '*' : '';
    return [
      r.endpoint,
      fmt(r.open.p50) + overloaded,
      fmt(r.open.p90),
      fmt(r.open.p99),
      String(errors),
      String(r.open.unfinished),
      fmt(r.max.throughput, 0),
      fmt(r.cost.cpuMs, 2),
      fmt(r.cost.spawns, 1),
      r.floor ? fmt(r.floor.p50, 2) : '-',
      r.floor ? fmt(r.floor.throughput, 0) : '-',
      r.floor ? fmt(r.floor.cpuMs, 2) : '-',
      r.floor ? fmt(r.cost.cpuMs / r.floor.cpuMs, 1) + '×' : '-',
      r.floor ? fmt((100 * r.max.throughput) / r.floor.throughput, 0) + '%' : '-',
    ];
  });
  const all = [header, ...lines];
  const widths = header.map((_, c) => Math.max(...all.map((line) => line[c].length)));
  const render = (line: string[]) =>
    line.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [render(header), rule, ...lines.map(render)].join('\n');
}

// ---------- main ----------

async function main(): Promise<void> {
  if (BOOT_ONLY) {
    process.stdout.write(`\n${bootTable(await measureEmbeddedBoot(ROOT, await freePort()))}\n`);
    return;
  }
  const began = performance.now();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-bench-'));
  const repoDir = path.join(dataDir, 'source.git');
  const rootToken = `glpat-${crypto.randomBytes(15).toString('base64url')}`;
  const database = await freshDatabase();
  let server: Server | undefined;
  let floorServer: { child: ChildProcess; url: string } | undefined;
  let cleaned = false;
  const cleanUp = async () => {
    if (cleaned) return;
    cleaned = true;
    if (floorServer) floorServer.child.kill('SIGTERM');
    if (server) await stopServer(server);
    if (env.BENCH_KEEP_DATABASE === '1' && database.url) log(`database kept: ${database.url}`);
    else await database.drop().catch((err: unknown) => log(`could not drop the database: ${String(err)}`));
    log('cleaning up');
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  // Interrupted: stop what this run started and drop its database before leaving.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping`);
      void cleanUp().finally(() => process.exit(130));
    });
  }
  try {
    log(`database: ${database.kind}; data dir: ${dataDir}`);
    const port = await freePort();
    let start = performance.now();
    server = await startServer(database, dataDir, rootToken, port);
    log(`server ready in ${seconds(start)}`);
    const api = new Api(server.url, rootToken);

    // Names and floors only: whether any selected endpoint reads the repository.
    const withRepository =
      MEASURES_COMMITS || selected(endpoints(0, '', '')).some((e) => e.floor.kind === 'git');
    start = performance.now();
    // The repository is built while the API seeding runs.
    const repository = withRepository
      ? buildRepository(repoDir).then(() => Math.round(performance.now() - start))
      : undefined;
    const seeded = await seed(api, server.pid);
    if (repository) {
      seeded.timings.repository_build = await repository;
      start = performance.now();
      const remote = `http://root:${rootToken}@127.0.0.1:${port}/${seeded.project.path}.git`;
      gitPush(remote, repoDir, ['--all']);
      gitPush(remote, repoDir, ['--tags']);
      seeded.timings.push = Math.round(performance.now() - start);
      log(
        `pushed ${DEFAULT_SHAPE.commits} commits, ${DEFAULT_SHAPE.branches} branches, ${DEFAULT_SHAPE.tags} tags in ${seconds(start)}`,
      );
    }

    const mainHead = repository
      ? execFileSync('git', [`--git-dir=${repoDir}`, 'rev-parse', 'main'], { env: gitEnv() })
          .toString()
          .trim()
      : undefined;
    start = performance.now();
    if (database.kind === 'pglite') {
      await stopServer(server);
      await withDatabase(
        database,
        dataDir,
        mergeRequestsSql(seeded) + pipelinesSql(seeded.project.id, mainHead),
      );
      await withDatabase(database, dataDir, 'VACUUM ANALYZE');
      server = await startServer(database, dataDir, rootToken, port);
    } else {
      await withDatabase(
        database,
        dataDir,
        mergeRequestsSql(seeded) + pipelinesSql(seeded.project.id, mainHead),
      );
      // Outside a transaction (VACUUM refuses one): autovacuum, after this many inserts, would both
      // analyze and vacuum, which sets the visibility map that index-only scans rely on.
      await withDatabase(database, dataDir, 'VACUUM ANALYZE');
    }
    seeded.timings.analyze = Math.round(performance.now() - start);
    const seedingSeconds = (performance.now() - began) / 1000;
    log(`seeding done after ${seedingSeconds.toFixed(0)} s; measuring`);

    // The floors read the server's own repository (its packs and loose refs as the push left them);
    // should the storage layout change, the pushed source has the same content.
    const hash = crypto.createHash('sha256').update(String(seeded.project.id)).digest('hex');
    let serverRepo = path.join(
      dataDir,
      'repositories',
      '@hashed',
      hash.slice(0, 2),
      hash.slice(2, 4),
      `${hash}.git`,
    );
    if (withRepository && !fs.existsSync(serverRepo)) {
      log(`warning: no repository at ${serverRepo}; the git floors read the pushed source instead`);
      serverRepo = repoDir;
    }
    const blobSha = withRepository
      ? execFileSync('git', [`--git-dir=${repoDir}`, 'rev-parse', 'main:src/mod42/file042.ts'], {
          env: gitEnv(),
        })
          .toString()
          .trim()
      : '';
    const list = selected(
      endpoints(
        seeded.project.id,
        blobSha,
        tagName(DEFAULT_SHAPE.tags - 21),
        seeded.member.id,
        seeded.snippetId,
        withRepository ? mainLine(repoDir) : [],
      ),
    );

    const rows: Row[] = [];
    for (const endpoint of list) {
      const api = `${server.url}/api/v4`;
      const measured = await measure(
        `${api}${endpoint.path}`,
        seeded.member.token,
        server.pid,
        server.spawnFile,
        endpoint.paths &&
          cycle(
            endpoint.paths.map((p) => `${api}${p}`),
            endpoint.name,
            log,
          ),
      );
      let floor: Row['floor'];
      if (endpoint.floor.kind === 'git') {
        const floorOptions = {
          invocations: settings.floorInvocations,
          serialMs: settings.floorSerialMs,
          connections: settings.connections,
          seconds: settings.floorSeconds,
        };
        const { each } = endpoint.floor;
        const result: GitFloor = each
          ? await gitFloorEach(serverRepo, each.argsList, each.command, floorOptions)
          : await gitFloor(serverRepo, endpoint.floor.args, floorOptions);
        floor = result;
      }
      rows.push({ endpoint: endpoint.name, path: endpoint.path, ...measured, floor });
      log(`measured ${endpoint.name}`);
    }

    // The Koa + SQL floors run last: on PGlite only one process may hold the database.
    if (list.some((e) => e.floor.kind === 'koa')) {
      if (database.kind === 'pglite') await stopServer(server);
      floorServer = await startFloorServer(database, dataDir, seeded.member.id);
      for (const [i, endpoint] of list.entries()) {
        if (endpoint.floor.kind !== 'koa') continue;
        // The member's token too: the /user floor looks it up, the project floors ignore it.
        const measured = await measure(
          `${floorServer.url}${endpoint.floor.path}`,
          seeded.member.token,
          floorServer.child.pid!,
          undefined,
        );
        rows[i].floor = {
          command: `bare Koa + ${database.kind === 'pglite' ? 'PGlite' : 'pg'}: GET ${endpoint.floor.path}`,
          p50: measured.open.p50,
          throughput: measured.max.throughput,
          cpuMs: measured.cost.cpuMs,
        };
      }
      log('measured the Koa + SQL floors');
    }

    let commits: CommitRow | undefined;
    if (MEASURES_COMMITS) {
      if (database.kind === 'pglite' && floorServer) {
        floorServer.child.kill('SIGTERM');
        floorServer = undefined;
        server = await startServer(database, dataDir, rootToken, port);
      }
      commits = await measureCommits(new Api(server.url, rootToken), seeded.project.id, server);
      commits.floor = await commitFloor(serverRepo, 'src/mod42/file042.ts', 30);
      log('measured commit creation');
    }

    let ci: CiRow | undefined;
    if (MEASURES_CI) {
      if (database.kind === 'pglite' && floorServer) {
        floorServer.child.kill('SIGTERM');
        floorServer = undefined;
        server = await startServer(database, dataDir, rootToken, port);
      }
      ci = await measureCi(new Api(server.url, rootToken), seeded.project.id);
      log('measured the 500-job push and the lint');
    }

    // Last, with nothing else running: the embedded default as `make run` starts it.
    let boot: BootRow[] = [];
    if (MEASURES_BOOT) {
      floorServer?.child.kill('SIGTERM');
      await stopServer(server);
      boot = await measureEmbeddedBoot(ROOT, await freePort());
      log('measured the embedded start');
    }

    const totalSeconds = (performance.now() - began) / 1000;
    const report = {
      when: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model,
        node: process.version,
        load: os.loadavg(),
      },
      database: database.kind,
      settings,
      dataset: { ...seeded.counts, repository: DEFAULT_SHAPE },
      seeding: {
        seconds: Math.round(seedingSeconds),
        timings_ms: seeded.timings,
        server_cpu_ms: seeded.serverCpu,
      },
      total_seconds: Math.round(totalSeconds),
      rows,
      commits,
      ci,
      boot,
    };
    fs.mkdirSync(path.dirname(OUT), { recursive: true });
    fs.writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);

    const out = [
      '',
      `forge-api benchmark: ${database.kind}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}; ` +
        `as a Developer member; open loop at ${settings.rate} req/s for ${settings.openSeconds} s, ` +
        `max over ${settings.connections} connections for ${settings.maxSeconds} s`,
      `dataset: ${seeded.counts.projects} projects in ${seeded.counts.groups} groups, ${seeded.counts.users} users, ` +
        `${seeded.counts.group_members + seeded.counts.project_members} memberships; ` +
        (withRepository
          ? `repository of ${DEFAULT_SHAPE.files} files, ${DEFAULT_SHAPE.commits} commits, ` +
            `${DEFAULT_SHAPE.branches} branches, ${DEFAULT_SHAPE.tags} tags`
          : 'no repository') +
        `; seeded in ${seedingSeconds.toFixed(0)} s`,
      '',
      table(rows),
      '',
      'p50/p90/p99: open loop, from when each request was due. * = max req/s below the offered rate (overloaded).',
      '(cold): every request, and every floor invocation, names another object: no cache can answer it.',
      "req/s of floor: max req/s as a share of the floor's.",
      `err: non-2xx answers. late: of ${Math.round(settings.rate * settings.openSeconds)} open-loop requests, those unanswered ${settings.drainMs / 1000} s after the last was due.`,
      `CPU: the server process and every process below it (git), ${database.kind === 'pglite' ? 'with PGlite in it' : 'not PostgreSQL'}. ` +
        'Floor p50: one invocation; floor CPU: ms per invocation.',
      'floors:',
      ...rows.map((r) => `  ${r.endpoint.padEnd(22)} ${r.floor?.command ?? '(none)'}`),
      'CPU ms/req by process (server; long-lived processes below it by name; exited: git commands run):',
      ...rows
        .filter((r) => r.floor && !r.floor.command.startsWith('bare Koa'))
        .map(
          (r) =>
            `  ${r.endpoint.padEnd(22)} ` +
            Object.entries(r.cost.byProcess)
              .map(([name, ms]) => `${name} ${fmt(ms, 2)}`)
              .join(', '),
        ),
      ...(commits ? ['', commitTable(commits)] : []),
      ...(ci ? ['', ciTable(ci)] : []),
      ...(boot.length > 0 ? ['', bootTable(boot)] : []),
      '',
      `total ${totalSeconds.toFixed(0)} s; JSON in ${path.relative(process.cwd(), OUT)}`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await cleanUp();
  }
}

main().catch((err: unknown) => {
  console.error('bench: the harness broke:', err instanceof Error ? err.stack : err);
  process.exit(1);
});
