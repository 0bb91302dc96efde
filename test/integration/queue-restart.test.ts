/**
 * A job in flight when its server process is killed (-9) runs again after a restart and completes: the
 * built server (`dist/src/main.js`) as `make run` starts it, on this run's database (its own schema on
 * PostgreSQL, its own data directory on PGlite).
 */
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { queueSchemaFor } from '../../src/core/queue.js';
import { RepositoryStorage } from '../../src/git/storage.js';
import { SERVER_ENTRY, serverPort, startServerProcess } from '../helpers/process.js';

const entry = SERVER_ENTRY;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-queue-restart-'));
const token = 'glpat-queue-restart-root-token';
const port = String(serverPort());
const api = `http://127.0.0.1:${port}/api/v4`;
const children: ChildProcess[] = [];
const postgres = process.env.FORGE_TEST_DATABASE_URL;
const schema = `test_${crypto.randomBytes(6).toString('hex')}`;

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgres });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function databaseUrl(): string {
  if (!postgres) return '';
  const url = new URL(postgres);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

const start = () =>
  startServerProcess(
    {
      ...process.env,
      PORT: port,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl(),
      FORGE_ROOT_TOKEN: token,
      LOG_LEVEL: 'warn',
      FORGE_JOB_EXPIRY: '4',
      FORGE_JOB_POLL: '0.5',
    },
    children,
  );

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );

async function call(
  method: string,
  route: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${api}${route}`, {
    method,
    headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (postgres)
    await admin(async (client) => {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.query(`DROP SCHEMA IF EXISTS ${queueSchemaFor(schema)} CASCADE`);
    });
});

describe.runIf(fs.existsSync(entry))('a job in flight when its process is killed', () => {
  it('runs again after the restart and completes', async () => {
    if (postgres) await admin((client) => client.query(`CREATE SCHEMA ${schema}`));
    const first = start();
    await first.ready;

    const created = await call('POST', '/projects', { name: 'doomed', initialize_with_readme: true });
    expect(created.status).toBe(201);
    const id = (created.body as { id: number }).id;
    const dir = path.join(dataDir, 'repositories', RepositoryStorage.relativePath(id));
    // Enough files that removing them takes a while: the kill lands while the job runs.
    const junk = path.join(dir, 'junk');
    fs.mkdirSync(junk);
    const files = 30_000;
    for (let n = 0; n < files; n++) fs.writeFileSync(path.join(junk, String(n)), '');

    expect((await call('DELETE', `/projects/${id}`)).status).toBe(202);
    const [aside] = fs.readdirSync(path.dirname(dir)).filter((name) => name.includes('.deleting-'));
    expect(aside).toBeDefined();
    const asideJunk = path.join(path.dirname(dir), aside, 'junk');
    const remaining = () => (fs.existsSync(asideJunk) ? fs.readdirSync(asideJunk).length : 0);

    // The repository_remove job has started once files begin to disappear: kill the process then.
    await until(() => remaining() < files, 30_000, 'the removal starts');
    const killed = exited(first.child);
    first.child.kill('SIGKILL');
    expect((await killed).signal).toBe('SIGKILL');
    expect(remaining()).toBeGreaterThan(0);
    if (postgres) {
      const rows = await admin((client) =>
        client.query(`SELECT state FROM ${queueSchemaFor(schema)}.job WHERE name = 'repository_remove'`),
      );
      expect(rows.rows).toEqual([{ state: 'active' }]);
    }

    // After the restart the boot's storage sweep may remove the trash first; the abandoned job still
    // expires (4 s), waits out its retry delay (5 s) and completes, whatever the machine's load.
    const second = start();
    await second.ready;
    await until(() => !fs.existsSync(path.join(path.dirname(dir), aside)), 60_000, 'the removal completes');
    // The deletion's other jobs (uploads_remove, project_snippet_repositories_remove,
    // job_artifacts.remove_project) are counted too; one the kill caught running fails once and runs again.
    await until(
      async () =>
        ((await call('GET', '/sidekiq/job_stats')).body as { jobs: { processed: number } }).jobs.processed ===
        4,
      30_000,
      'the jobs are counted as processed',
    );
    expect((await call('GET', '/sidekiq/job_stats')).body).toMatchObject({
      jobs: { processed: 4, enqueued: 0, dead: 0 },
    });
    if (postgres) {
      const rows = await admin((client) =>
        client.query(
          `SELECT state, retry_count FROM ${queueSchemaFor(schema)}.job WHERE name = 'repository_remove'`,
        ),
      );
      expect(rows.rows).toEqual([{ state: 'completed', retry_count: 1 }]);
    }

    // SIGTERM stops the workers and the server cleanly.
    const stopped = exited(second.child);
    second.child.kill('SIGTERM');
    expect((await stopped).code).toBe(0);
  }, 180_000);
});
