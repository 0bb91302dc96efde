/**
 * Several server processes started at the same moment on one PostgreSQL database and `DATA_DIR`, as the
 * README allows (issue 23): each migrates, installs the queue, declares its queues, makes sure root and
 * its token exist and sweeps the storages, and every one must come up serving, with one root and one
 * token between them. The built server (`dist/src/main.js`), as `make run` starts it.
 */
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { RepositoryStorage } from '../../src/git/storage.js';
import { createProcessDatabaseUrl } from '../helpers/database.js';
import { SERVER_ENTRY, serverPort, startServerProcess } from '../helpers/process.js';
import { databaseUrl, withClient } from '../helpers/template-database.js';

const postgres = process.env.FORGE_TEST_DATABASE_URL;
const children: ChildProcess[] = [];
const dataDirs: string[] = [];
const emptyDatabases: string[] = [];

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
  // A run's own databases go with the run's others; without the global setup, here.
  if (postgres && !inject('forgeTestTemplate')?.prefix)
    await withClient(postgres, async (client) => {
      for (const name of emptyDatabases) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
});

/** A database with nothing in it: the processes migrate it. */
async function emptyDatabase(): Promise<string> {
  const prefix = inject('forgeTestTemplate')?.prefix ?? 'forge_test_';
  const name = `${prefix}empty_${crypto.randomBytes(6).toString('hex')}`;
  await withClient(postgres!, (client) => client.query(`CREATE DATABASE ${name}`));
  emptyDatabases.push(name);
  return databaseUrl(postgres!, name);
}

/** What a killed predecessor left in the storage: an orphan repository and a repository's trash. */
function leaveLeftovers(dataDir: string): string[] {
  const storage = path.join(dataDir, 'repositories');
  const leftovers = [
    path.join(storage, RepositoryStorage.relativePath(900_001)),
    path.join(storage, `${RepositoryStorage.relativePath(900_002)}.deleting-0123abcd`),
  ];
  for (const dir of leftovers) {
    fs.mkdirSync(path.join(dir, 'objects'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'HEAD'), 'ref: refs/heads/main\n');
  }
  return leftovers;
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

const cases = [
  [3, 'an empty', emptyDatabase],
  [2, 'a migrated', createProcessDatabaseUrl],
  [3, 'a migrated', createProcessDatabaseUrl],
] as const;

describe.runIf(fs.existsSync(SERVER_ENTRY))('server processes started together on one database', () => {
  it.skipIf(!postgres).each(cases)(
    '%i start on %s database and all serve, with one root and one token (needs PostgreSQL)',
    async (count, _, url) => {
      const database = await url();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-cluster-'));
      dataDirs.push(dataDir);
      const leftovers = leaveLeftovers(dataDir);
      const ports = new Set<number>();
      while (ports.size < count) ports.add(serverPort());
      const env = { ...process.env, DATABASE_URL: database, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
      const started = [...ports].map((port) =>
        startServerProcess({ ...env, PORT: String(port), FORGE_ROOT_TOKEN: '' }, children),
      );
      const outputs = await Promise.all(started.map((server) => server.ready));

      // One start generated the token and printed it; the others found it saved.
      const printed = outputs
        .map((output) => /root token \(shown once[^)]*\): (glpat-\S+)/.exec(output)?.[1])
        .filter((token) => token !== undefined);
      expect(printed).toHaveLength(1);
      const token = printed[0];
      expect(fs.readFileSync(path.join(dataDir, 'root-token'), 'utf8').trim()).toBe(token);
      for (const port of ports) {
        expect((await fetch(`http://127.0.0.1:${port}/-/health`)).status).toBe(200);
        expect((await fetch(`http://127.0.0.1:${port}/-/readiness`)).status).toBe(200);
        const user = await fetch(`http://127.0.0.1:${port}/api/v4/user`, {
          headers: { 'PRIVATE-TOKEN': token },
        });
        expect(user.status).toBe(200);
        expect(((await user.json()) as { username: string }).username).toBe('root');
      }
      const [{ roots, tokens }] = await withClient(database, async (client) =>
        client
          .query<{ roots: number; tokens: number }>(
            `SELECT (SELECT count(*)::int FROM users WHERE username = 'root') AS roots,
              (SELECT count(*)::int FROM personal_access_tokens t JOIN users u ON u.id = t.user_id
                WHERE u.username = 'root') AS tokens`,
          )
          .then((result) => result.rows),
      );
      expect({ roots, tokens }).toEqual({ roots: 1, tokens: 1 });
      // Every process swept the storage as it started, perhaps while another did, and none failed.
      for (const leftover of leftovers) expect(fs.existsSync(leftover), leftover).toBe(false);
      for (const output of outputs) expect(output).not.toContain('storage recovery failed');

      const exits = started.map((server) => exited(server.child));
      for (const server of started) server.child.kill('SIGTERM');
      expect(await Promise.all(exits)).toEqual(started.map(() => 0));
    },
    60_000,
  );
});
