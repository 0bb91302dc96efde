/**
 * The runner part of `make bench` (issue 26's goals), each beside a floor measured in the same run:
 *
 * - `runner pickup`: 100 instance runners long-poll `POST /jobs/request`; a build made pending (an INSERT,
 *   as pipeline processing does) reaches one of them: p99 of commit → 201 (goal ≤ 50 ms). Floor: the same
 *   INSERT heard by a plain `LISTEN` client (PostgreSQL's own notification latency).
 * - `runner idle CPU`: the server's CPU while the 100 runners wait (goal ≤ 2% of a core). Floor: the
 *   server's CPU over the same time with nobody connected.
 * - `runner trace`: 50 MB of log through `PATCH /jobs/:id/trace` in 1 MB increments (goal ≥ 20 MB/s).
 *   Floor: the same 50 inserts of 1 MB into a bytea table over one pg connection.
 *
 * A benchmark, not a test: it prints numbers and never fails on one; without PostgreSQL it says so and
 * stops. Runs the server from src with tsx, as a child process (its CPU is its own).
 * Env: BENCH_PG_URL (administrative PostgreSQL URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_RUNNERS (100), BENCH_PICKUPS (60), BENCH_IDLE_SECONDS (10), BENCH_TRACE_MB (50).
 * Run: node --import tsx scripts/bench/runner.ts
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { percentile } from './driver.js';
import { cpuMs } from './proc.js';

const env = process.env;
const ROOT = path.resolve(import.meta.dirname, '../..');
const ADMIN_URL = env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const RUNNERS = Number(env.BENCH_RUNNERS ?? 100);
const PICKUPS = Number(env.BENCH_PICKUPS ?? 60);
const IDLE_SECONDS = Number(env.BENCH_IDLE_SECONDS ?? 10);
const TRACE_MB = Number(env.BENCH_TRACE_MB ?? 50);

const out = (line: string) => process.stdout.write(`${line}\n`);
const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');
const agent = new http.Agent({ keepAlive: true, maxSockets: RUNNERS + 10 });

function call(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString() }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

async function main() {
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch {
    out('runner bench: skipped (needs PostgreSQL at BENCH_PG_URL)');
    return;
  }
  const dbName = `forge_bench_runner_${process.pid}`;
  await admin.query(`CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-bench-runner-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const rootToken = `glpat-${crypto.randomBytes(12).toString('hex')}`;
  const log = fs.openSync(path.join(dataDir, 'server.log'), 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: {
      PATH: env.PATH,
      HOME: env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      EXTERNAL_URL: url,
      DATA_DIR: dataDir,
      DATABASE_URL: dbUrl.toString(),
      FORGE_ROOT_TOKEN: rootToken,
      LOG_LEVEL: 'warn',
      FORGE_RUNNER_LONG_POLL_SECONDS: '50',
    },
    stdio: ['ignore', log, log],
  });
  const db = new pg.Client({ connectionString: dbUrl.toString() });
  const listener = new pg.Client({ connectionString: dbUrl.toString() });
  const runners: Array<{ stop: boolean; loop: Promise<void> }> = [];
  try {
    for (let i = 0; ; i++) {
      if (i > 300) throw new Error(`the server did not start; see ${dataDir}/server.log`);
      if (
        await call(`${url}/-/readiness`, 'GET', {}).then(
          (r) => r.status === 200,
          () => false,
        )
      )
        break;
      await sleep(300);
    }
    await db.connect();
    await listener.connect();
    const project = await call(
      `${url}/api/v4/projects`,
      'POST',
      {
        'PRIVATE-TOKEN': rootToken,
        'Content-Type': 'application/json',
      },
      JSON.stringify({ name: 'bench-runner', initialize_with_readme: true }),
    );
    const projectId = (JSON.parse(project.body) as { id: number }).id;
    const {
      rows: [pipeline],
    } = await db.query<{ id: number }>(
      `INSERT INTO ci_pipelines (project_id, iid, ref, sha, before_sha, tag, source, status, user_id, created_at, updated_at)
       VALUES ($1, 1, 'main', repeat('a', 40), repeat('0', 40), false, 'push', 'running', 1, now(), now()) RETURNING id`,
      [projectId],
    );
    const insertJob = (name: string) =>
      db.query<{ id: number }>(
        `INSERT INTO ci_builds (type, project_id, pipeline_id, name, stage, stage_idx, status, "when", allow_failure,
           options, yaml_variables, interruptible, retried, user_id, ref, tag, sha, queued_at, created_at, updated_at)
         VALUES ('build', $1, $2, $3, 'test', 0, 'pending', 'on_success', false, '{"script":["true"]}', '{}',
           false, false, 1, 'main', false, repeat('a', 40), now(), now(), now()) RETURNING id`,
        [projectId, pipeline.id, name],
      );
    const tokens: string[] = [];
    for (let i = 0; i < RUNNERS; i++) {
      const token = `glrt-bench${i}-${crypto.randomBytes(8).toString('hex')}`;
      tokens.push(token);
      await db.query(
        `INSERT INTO ci_runners (runner_type, token_digest, registration_type, description)
         VALUES ('instance_type', $1, 'authenticated_user', $2)`,
        [sha256(token), `bench ${i}`],
      );
    }

    // --- idle CPU floor: the server with nobody connected ---
    const idleFloor = await serverCpu(child.pid!, IDLE_SECONDS);

    // --- 100 long-polling runners ---
    const received = new Map<number, number>();
    let waiting = 0;
    for (const token of tokens) {
      const runner = { stop: false, loop: Promise.resolve() };
      runner.loop = (async () => {
        while (!runner.stop) {
          waiting++;
          const res = await call(
            `${url}/api/v4/jobs/request`,
            'POST',
            { 'Content-Type': 'application/json' },
            JSON.stringify({ token, info: { name: 'bench' } }),
          ).catch(() => null);
          waiting--;
          if (res && res.status !== 201 && res.status !== 204 && !runner.stop) {
            console.error(`jobs/request answered ${res.status}: ${res.body.slice(0, 200)}`);
            runner.stop = true;
          }
          if (res?.status === 201) {
            const job = JSON.parse(res.body) as { id: number; token: string };
            received.set(job.id, performance.now());
            await call(
              `${url}/api/v4/jobs/${job.id}`,
              'PUT',
              { 'Content-Type': 'application/json' },
              JSON.stringify({ token: job.token, state: 'success' }),
            );
          } else if (!res) await sleep(100);
        }
      })();
      runners.push(runner);
    }
    while (waiting < RUNNERS) await sleep(50);
    await sleep(1000);
    const idle = await serverCpu(child.pid!, IDLE_SECONDS);

    // --- pickup latency, beside LISTEN latency ---
    await listener.query('LISTEN forge_changes');
    const heard = new Map<number, number>();
    listener.on('notification', (n) => {
      const id = /^ci_build_pending:(\d+)$/.exec(n.payload ?? '')?.[1];
      if (id) heard.set(Number(id), performance.now());
    });
    const pickup: number[] = [];
    const notify: number[] = [];
    for (let i = 0; i < PICKUPS; i++) {
      const before = performance.now();
      const {
        rows: [job],
      } = await insertJob(`pickup ${i}`);
      const committed = performance.now();
      for (let t = 0; t < 400 && !(received.has(job.id) && heard.has(job.id)); t++) await sleep(5);
      if (received.has(job.id)) pickup.push(received.get(job.id)! - committed);
      if (heard.has(job.id)) notify.push(heard.get(job.id)! - committed);
      void before;
      await sleep(50);
    }
    for (const runner of runners) runner.stop = true;

    // --- trace throughput ---
    const {
      rows: [traced],
    } = await insertJob('trace');
    const jobToken = `glcbt-bench-${crypto.randomBytes(8).toString('hex')}`;
    await db.query(
      `UPDATE ci_builds SET status = 'running', runner_id = (SELECT min(id) FROM ci_runners), token_digest = $2,
         started_at = now() WHERE id = $1`,
      [traced.id, sha256(jobToken)],
    );
    const chunk = Buffer.alloc(1024 * 1024, 'x\n');
    let offset = 0;
    const traceStart = performance.now();
    for (let i = 0; i < TRACE_MB; i++) {
      const res = await call(
        `${url}/api/v4/jobs/${traced.id}/trace`,
        'PATCH',
        {
          'JOB-TOKEN': jobToken,
          'Content-Type': 'text/plain',
          'Content-Range': `${offset}-${offset + chunk.length - 1}`,
          'Content-Length': String(chunk.length),
        },
        chunk,
      );
      if (res.status !== 202) throw new Error(`trace PATCH answered ${res.status}: ${res.body}`);
      offset += chunk.length;
    }
    const traceSeconds = (performance.now() - traceStart) / 1000;
    await db.query('CREATE TEMP TABLE floor_chunks (n integer, data bytea)');
    const floorStart = performance.now();
    for (let i = 0; i < TRACE_MB; i++) await db.query('INSERT INTO floor_chunks VALUES ($1, $2)', [i, chunk]);
    const floorSeconds = (performance.now() - floorStart) / 1000;

    pickup.sort((a, b) => a - b);
    notify.sort((a, b) => a - b);
    const ms = (v: number) => `${v.toFixed(1)} ms`;
    const pct = (cpu: number, seconds: number) => `${((cpu / (seconds * 1000)) * 100).toFixed(2)}% of a core`;
    out('\nrunner jobs (goal in brackets)');
    out(
      `  runner pickup p50/p99      ${ms(percentile(pickup, 50))} / ${ms(percentile(pickup, 99))} [p99 ≤ 50 ms]` +
        `  (${pickup.length}/${PICKUPS} picked; floor LISTEN p50/p99 ${ms(percentile(notify, 50))} / ${ms(percentile(notify, 99))})`,
    );
    out(
      `  runner idle CPU            ${pct(idle, IDLE_SECONDS)} with ${RUNNERS} runners waiting [≤ 2%]` +
        `  (floor, nobody connected: ${pct(idleFloor, IDLE_SECONDS)})`,
    );
    out(
      `  runner trace ${TRACE_MB} MB          ${(TRACE_MB / traceSeconds).toFixed(1)} MB/s [≥ 20 MB/s]` +
        `  (floor, the same inserts over one connection: ${(TRACE_MB / floorSeconds).toFixed(1)} MB/s)`,
    );
  } finally {
    for (const runner of runners) runner.stop = true;
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    agent.destroy();
    await db.end().catch(() => undefined);
    await listener.end().catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    if (env.BENCH_SHOW_LOG) process.stderr.write(fs.readFileSync(path.join(dataDir, 'server.log'), 'utf8'));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The server's CPU time over `seconds`, in ms. */
async function serverCpu(pid: number, seconds: number): Promise<number> {
  const start = cpuMs(pid);
  await sleep(seconds * 1000);
  return cpuMs(pid) - start;
}

await main();
