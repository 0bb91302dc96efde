/**
 * kill -9 in the middle of a repository storage move, on PostgreSQL and on PGlite: the built server
 * (`dist/src/main.js`) as a process group, armed with the move's fault points (src/core/faults.ts).
 * - killed after the copy, before the switch: the repository is whole on the source, the only storage
 *   its row names, and nothing of the copy is at the destination's hashed path;
 * - killed after the switch, before the source copy is removed: the row names the destination;
 * - after each restart the move's job runs again and the move finishes, with every ref kept, the
 *   repository on exactly one storage and no `.moving-*` copy left.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { RepositoryStorage } from '../../src/git/storage.js';
import { remoteUrl } from '../helpers/git-cli.js';
import { SERVER_ENTRY, serverPort, startServerProcess } from '../helpers/process.js';
import { databaseUrl, withClient } from '../helpers/template-database.js';

const exec = promisify(execFile);
const postgres = process.env.FORGE_TEST_DATABASE_URL;
const token = 'glpat-storage-move-crash-token';
const children: ChildProcess[] = [];
const scratch: string[] = [];
const databases: string[] = [];

type Json = Record<string, unknown>;

afterAll(async () => {
  for (const child of children) killGroup(child);
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
  for (const name of databases)
    await withClient(postgres!, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
});

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

const exited = (child: ChildProcess) =>
  new Promise<NodeJS.Signals | number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode ?? child.exitCode);
    else child.once('exit', (code, signal) => resolve(signal ?? code));
  });

async function gitClient(args: string[], cwd: string): Promise<string> {
  const { stdout } = await exec(
    'git',
    ['-c', 'user.name=Crash', '-c', 'user.email=crash@example.com', ...args],
    {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' },
    },
  );
  return stdout.trim();
}

class MoveCrashRun {
  readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-move-crash-'));
  readonly second = path.join(this.dataDir, 'second');
  readonly work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-move-crash-client-'));
  readonly port = String(serverPort());
  readonly base = `http://127.0.0.1:${this.port}`;
  private server?: ChildProcess;

  constructor(private readonly databaseUrl: string) {
    scratch.push(this.dataDir, this.work);
  }

  roots(): Record<string, string> {
    return { default: path.join(this.dataDir, 'repositories'), second: this.second };
  }

  async start(fault?: string): Promise<void> {
    const { child, ready } = startServerProcess(
      {
        ...process.env,
        PORT: this.port,
        DATA_DIR: this.dataDir,
        DATABASE_URL: this.databaseUrl,
        FORGE_ROOT_TOKEN: token,
        FORGE_STORAGES: `second=${this.second}`,
        LOG_LEVEL: 'warn',
        FORGE_JOB_EXPIRY: '3',
        FORGE_JOB_POLL: '0.5',
        FORGE_FAULT_INJECT: fault ?? '',
      },
      children,
      { detached: true },
    );
    this.server = child;
    await ready;
  }

  async killed(): Promise<void> {
    const server = this.server!;
    const timer = setTimeout(() => killGroup(server), 30_000);
    const end = await exited(server);
    clearTimeout(timer);
    expect(end, 'the armed fault point was reached').toBe('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  async stop(): Promise<void> {
    const end = exited(this.server!);
    this.server!.kill('SIGTERM');
    await end;
  }

  async api(method: string, route: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const response = await fetch(`${this.base}/api/v4${route}`, {
      method,
      headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
  }

  dir(storage: string, id: number): string {
    return path.join(this.roots()[storage], RepositoryStorage.relativePath(id));
  }

  /** Whatever is beside the repository's hashed path on a storage (copies, trash). */
  siblings(storage: string, id: number): string[] {
    const dir = this.dir(storage, id);
    const names = fs.existsSync(path.dirname(dir)) ? fs.readdirSync(path.dirname(dir)) : [];
    return names.filter((name) => name.startsWith(path.basename(dir)));
  }

  async refsOnDisk(storage: string, id: number): Promise<string> {
    return gitClient(
      ['--git-dir', this.dir(storage, id), 'for-each-ref', '--format=%(objectname) %(refname)'],
      this.work,
    );
  }

  async waitFinished(projectId: number, moveId: number): Promise<Json> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const move = (await this.api('GET', `/projects/${projectId}/repository_storage_moves/${moveId}`)).body;
      if (['finished', 'failed', 'cleanup_failed'].includes(move.state as string)) return move;
      if (Date.now() > deadline) throw new Error(`move ${moveId} still ${move.state as string}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

const targets = [
  ...(postgres ? [{ name: 'PostgreSQL', embedded: false }] : []),
  { name: 'PGlite', embedded: true },
];

describe.runIf(fs.existsSync(SERVER_ENTRY))('kill -9 during a repository storage move', () => {
  it.concurrent.each(targets)(
    'on $name: the repository stays readable on one storage and the move resumes',
    async ({ embedded }) => {
      let url = '';
      if (!embedded) {
        const name = `forge_move_crash_${crypto.randomBytes(6).toString('hex')}`;
        await withClient(postgres!, (client) => client.query(`CREATE DATABASE ${name}`));
        databases.push(name);
        url = databaseUrl(postgres!, name);
      }
      const run = new MoveCrashRun(url);

      // A project with a README and a pushed branch.
      await run.start('storage-move:replicated');
      const created = await run.api('POST', '/projects', { name: 'moving', initialize_with_readme: true });
      expect(created.status).toBe(201);
      const id = created.body.id as number;
      const clone = path.join(run.work, 'clone');
      const remote = remoteUrl(run.base, created.body.path_with_namespace as string, token);
      await gitClient(['clone', '--quiet', remote, clone], run.work);
      fs.writeFileSync(path.join(clone, 'data.txt'), 'precious');
      await gitClient(['checkout', '-q', '-b', 'work'], clone);
      await gitClient(['add', '.'], clone);
      await gitClient(['commit', '-q', '-m', 'precious data'], clone);
      await gitClient(['push', '--quiet', 'origin', 'work'], clone);
      const refs = await run.refsOnDisk('default', id);
      expect(refs).toContain('refs/heads/work');

      // 1. Killed after the copy, before the switch.
      const first = await run.api('POST', `/projects/${id}/repository_storage_moves`, {
        destination_storage_name: 'second',
      });
      expect(first.status).toBe(201);
      await run.killed();
      expect(await run.refsOnDisk('default', id)).toBe(refs);
      expect(fs.existsSync(run.dir('second', id))).toBe(false);

      await run.start('storage-move:cleanup');
      // 2. The job runs again, switches, and is killed before the source copy goes.
      await run.killed();
      expect(await run.refsOnDisk('second', id)).toBe(refs);

      await run.start();
      const finished = await run.waitFinished(id, first.body.id as number);
      expect(finished.state).toBe('finished');
      const project = (await run.api('GET', `/projects/${id}`)).body;
      expect(project.repository_storage).toBe('second');
      expect(await run.refsOnDisk('second', id)).toBe(refs);
      expect(fs.existsSync(run.dir('default', id))).toBe(false);
      expect(run.siblings('second', id)).toEqual([path.basename(run.dir('second', id))]);
      expect(run.siblings('default', id)).toEqual([]);
      const ls = await gitClient(['ls-remote', remote], run.work);
      expect(ls).toContain(
        refs
          .split('\n')
          .find((line) => line.endsWith('refs/heads/work'))!
          .split(' ')[0],
      );
      // Writable again.
      fs.writeFileSync(path.join(clone, 'more.txt'), 'more');
      await gitClient(['add', '.'], clone);
      await gitClient(['commit', '-q', '-m', 'after the move'], clone);
      await gitClient(['push', '--quiet', 'origin', 'work'], clone);
      await run.stop();
    },
    240_000,
  );
});
