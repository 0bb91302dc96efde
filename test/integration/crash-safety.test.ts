/**
 * kill -9 at any point of a project's creation or deletion, or of a push, and a restart (issue 9):
 * - every project has a readable repository, and no repository is left without its project;
 * - nothing half-made stays in the storage: no `.creating-*`, `.deleting-*`, orphan `@hashed/…`
 *   directory, git quarantine (`objects/tmp_objdir-*`) or lock file;
 * - creation takes over a directory left at its path (PGlite hands an id out again after a crash);
 * - every write answered before the kill is still there.
 *
 * The built server (`dist/src/main.js`) runs as a process group of its own, on PostgreSQL (a database of
 * its own) and on PGlite (the same DATA_DIR across restarts). Each life of the server is armed with one
 * named point (FORGE_FAULT_INJECT, src/core/faults.ts) at which it kills its group, git included; one
 * more life is killed from outside at a moment timing alone picks.
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
const token = 'glpat-crash-safety-root-token';
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

/** Plain git as a client runs it; never prompts, ignores the machine's configuration. */
async function gitClient(args: string[], cwd: string, home: string): Promise<{ ok: boolean; out: string }> {
  try {
    const { stdout } = await exec(
      'git',
      ['-c', 'user.name=Crash', '-c', 'user.email=crash@example.com', ...args],
      {
        cwd,
        env: { PATH: process.env.PATH, HOME: home, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' },
      },
    );
    return { ok: true, out: stdout.trim() };
  } catch (err) {
    return { ok: false, out: String((err as { stderr?: string }).stderr ?? err) };
  }
}

/** One database's run: the server's lives, what was acknowledged, and the checks after each restart. */
class CrashRun {
  readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-crash-'));
  readonly storage = path.join(this.dataDir, 'repositories');
  readonly work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-crash-client-'));
  readonly port = String(serverPort());
  readonly base = `http://127.0.0.1:${this.port}`;
  /** Projects whose creation was answered 201 and deletion never answered, with acknowledged branch heads. */
  readonly live = new Map<number, { fullPath: string; heads: Map<string, string> }>();
  /** Projects whose deletion was answered 202. */
  readonly gone = new Set<number>();
  private counter = 0;
  private server?: ChildProcess;

  constructor(private readonly databaseUrl: string) {
    scratch.push(this.dataDir, this.work);
  }

  /** Starts a life of the server, armed with `fault` when given. */
  async start(fault?: string): Promise<void> {
    const { child, ready } = startServerProcess(
      {
        ...process.env,
        PORT: this.port,
        DATA_DIR: this.dataDir,
        DATABASE_URL: this.databaseUrl,
        FORGE_ROOT_TOKEN: token,
        LOG_LEVEL: 'warn',
        // A job killed while it ran is retried soon after the restart.
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

  /** Waits for the armed point to kill the server (its whole group). */
  async killed(): Promise<void> {
    const server = this.server!;
    const timer = setTimeout(() => killGroup(server), 20_000);
    const end = await exited(server);
    clearTimeout(timer);
    expect(end, 'the armed fault point was reached').toBe('SIGKILL');
    // The group's git processes die with it; give the kernel a moment to reap them.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  /** Kills the server's group from outside, now. */
  async kill(): Promise<void> {
    killGroup(this.server!);
    await exited(this.server!);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  async stop(): Promise<void> {
    const end = exited(this.server!);
    this.server!.kill('SIGTERM');
    expect(await end).toBe(0);
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

  /** POST /projects; the project is acknowledged when answered 201. Returns its id, if answered. */
  async create(readme = true): Promise<number | undefined> {
    const name = `crash-${++this.counter}`;
    const created = await this.api('POST', '/projects', { name, initialize_with_readme: readme }).catch(
      () => undefined,
    );
    if (created?.status !== 201) return undefined;
    const id = created.body.id as number;
    this.live.set(id, { fullPath: created.body.path_with_namespace as string, heads: new Map() });
    return id;
  }

  /** DELETE /projects/:id; acknowledged when answered 202, and either outcome is right when unanswered. */
  async remove(id: number): Promise<void> {
    const deleted = await this.api('DELETE', `/projects/${id}`).catch(() => undefined);
    if (deleted && deleted.status !== 202) return;
    this.live.delete(id);
    if (deleted) this.gone.add(id);
  }

  /** A new commit pushed over HTTP as a new branch; acknowledged when `git push` succeeds. */
  async push(id: number): Promise<void> {
    const project = this.live.get(id)!;
    const local = path.join(this.work, 'local');
    if (!fs.existsSync(local)) {
      fs.mkdirSync(local);
      await gitClient(['init', '-q', '-b', 'main'], local, this.work);
    }
    const branch = `pushed-${++this.counter}`;
    // Enough content that git writes a pack into its quarantine, not only loose objects.
    fs.writeFileSync(path.join(local, `${branch}.bin`), crypto.randomBytes(256 * 1024));
    await gitClient(['add', '-A'], local, this.work);
    await gitClient(['commit', '-q', '-m', branch], local, this.work);
    const sha = (await gitClient(['rev-parse', 'HEAD'], local, this.work)).out;
    const url = remoteUrl(this.base, project.fullPath, token);
    const pushed = await gitClient(['push', '-q', url, `HEAD:refs/heads/${branch}`], local, this.work);
    if (pushed.ok) project.heads.set(branch, sha);
  }

  /** A commit through the API on a new branch; acknowledged when answered 201. */
  async commit(id: number): Promise<void> {
    const branch = `api-${++this.counter}`;
    const made = await this.api('POST', `/projects/${id}/repository/commits`, {
      branch,
      start_branch: 'main',
      commit_message: branch,
      actions: [{ action: 'create', file_path: `${branch}.txt`, content: branch }],
    }).catch(() => undefined);
    if (made?.status === 201) this.live.get(id)?.heads.set(branch, made.body.id as string);
  }

  repositoryOf(id: number): string {
    return path.join(this.storage, RepositoryStorage.relativePath(id));
  }

  /** Every directory under `@hashed/ab/cd/`, by path. */
  storageEntries(): string[] {
    const hashed = path.join(this.storage, '@hashed');
    if (!fs.existsSync(hashed)) return [];
    return fs
      .readdirSync(hashed)
      .flatMap((a) => fs.readdirSync(path.join(hashed, a)).map((b) => path.join(hashed, a, b)))
      .flatMap((ab) => fs.readdirSync(ab).map((name) => path.join(ab, name)));
  }

  /** git's leftovers of a killed write inside the repositories. */
  gitLeftovers(): string[] {
    return this.storageEntries().flatMap((dir) => {
      const objects = path.join(dir, 'objects');
      const found = fs.existsSync(objects)
        ? fs
            .readdirSync(objects)
            .filter((name) => name.startsWith('tmp_objdir-'))
            .map((name) => path.join(objects, name))
        : [];
      const refs = path.join(dir, 'refs');
      if (fs.existsSync(refs))
        for (const name of fs.readdirSync(refs, { recursive: true }) as string[])
          if (name.endsWith('.lock')) found.push(path.join(refs, name));
      return found;
    });
  }

  /** The three properties, and every acknowledged write, on the restarted server. */
  async verify(options: { fsck?: boolean } = {}): Promise<void> {
    const listed = await this.api('GET', '/projects?per_page=100&order_by=id&sort=asc');
    expect(listed.status).toBe(200);
    const ids = (listed.body as unknown as Json[]).map((project) => project.id as number);
    expect(ids.length).toBeLessThan(100);
    for (const id of this.live.keys()) expect(ids, `acknowledged project ${id}`).toContain(id);
    for (const id of this.gone) expect(ids, `acknowledged deletion of ${id}`).not.toContain(id);

    // Exactly one whole repository per project, and nothing else.
    expect(this.storageEntries().sort()).toEqual(ids.map((id) => this.repositoryOf(id)).sort());
    expect(this.gitLeftovers()).toEqual([]);
    await Promise.all(
      ids.map(async (id) => {
        const dir = this.repositoryOf(id);
        const bare = await exec('git', ['--git-dir', dir, 'rev-parse', '--is-bare-repository']);
        expect(bare.stdout.trim()).toBe('true');
        await exec('git', ['--git-dir', dir, 'for-each-ref']);
        if (options.fsck)
          await exec('git', ['--git-dir', dir, 'fsck', '--no-progress', '--connectivity-only']);
        // Through the API too where a write was acknowledged, and at the end (on the embedded database
        // every request waits its turn, so not for every project every time).
        const acknowledged = this.live.get(id)?.heads ?? new Map<string, string>();
        if (acknowledged.size === 0 && !options.fsck) return;
        const branches = await this.api('GET', `/projects/${id}/repository/branches?per_page=100`);
        expect(branches.status, `branches of ${id}`).toBe(200);
        const heads = new Map(
          (branches.body as unknown as Json[]).map((b) => [
            b.name as string,
            (b.commit as Json).id as string,
          ]),
        );
        for (const [branch, sha] of acknowledged) expect(heads.get(branch), branch).toBe(sha);
      }),
    );
  }
}

const targets = [
  ...(postgres ? [{ name: 'PostgreSQL', embedded: false }] : []),
  { name: 'PGlite', embedded: true },
];

describe.runIf(fs.existsSync(SERVER_ENTRY))('kill -9 during writes', () => {
  // The two databases' runs are independent and mostly wait (on processes and PostgreSQL): together.
  it.concurrent.each(targets)(
    'on $name: recovery leaves every project whole and nothing else behind',
    async ({ embedded }) => {
      let url = '';
      if (!embedded) {
        const name = `forge_crash_${crypto.randomBytes(6).toString('hex')}`;
        await withClient(postgres!, (client) => client.query(`CREATE DATABASE ${name}`));
        databases.push(name);
        url = databaseUrl(postgres!, name);
      }
      const run = new CrashRun(url);

      // 1. Projects to work on; a creation over directories left at the next ids; a deletion whose
      //    removal job is killed half-way.
      await run.start('repository-remove:started');
      for (let n = 0; n < 6; n++) await run.create(n !== 5);
      const [a, b, c, d, e, pushTarget] = [...run.live.keys()];
      await run.push(pushTarget);
      await run.commit(a);
      const next = Math.max(...run.live.keys()) + 1;
      const planted = [next, next + 1, next + 2].map((id) => run.repositoryOf(id));
      for (const dir of planted) {
        fs.mkdirSync(path.join(dir, 'refs', 'heads'), { recursive: true });
        fs.writeFileSync(path.join(dir, 'refs', 'heads', 'stale'), 'not a repository of this project\n');
      }
      const fresh = await run.create();
      expect(fresh, 'a creation over a leftover directory').toBe(next);
      expect(fs.existsSync(path.join(run.repositoryOf(next), 'refs', 'heads', 'stale'))).toBe(false);
      await run.remove(a);
      await run.killed();
      // The job was killed after moving the repository aside: the trash is on disk.
      expect(run.storageEntries().some((dir) => dir.includes('.deleting-'))).toBe(true);

      // 2-4. Deletions killed before their commit, after it, and after the repository moved aside.
      await run.start('project-delete:rows');
      await run.verify();
      await run.remove(b);
      await run.killed();

      await run.start('project-delete:committed');
      await run.verify();
      await run.remove(c);
      await run.killed();
      expect(fs.existsSync(run.repositoryOf(c)), 'an orphan: its row is gone').toBe(true);

      await run.start('project-delete:retired');
      await run.verify();
      await run.remove(d);
      await run.killed();

      // 5-6. Creations killed with the repository half-built, and with it placed but its row uncommitted.
      for (const point of ['project-create:built', 'project-create:placed']) {
        await run.start(point);
        await run.verify();
        const before = new Set(run.storageEntries());
        expect(await run.create(), point).toBeUndefined();
        await run.killed();
        // What the kill left: a repository half-built, a whole one without its row.
        const left = run.storageEntries().filter((dir) => !before.has(dir));
        expect(
          left.map((dir) => path.basename(dir).replace(/^[0-9a-f]{64}/, '')),
          point,
        ).toEqual(
          point === 'project-create:built'
            ? [expect.stringMatching(/^\.git\.creating-[0-9a-f]{8}$/)]
            : ['.git'],
        );
      }

      // 7. A push killed with git, while git holds the pushed objects in quarantine.
      await run.start('push:pre-receive');
      await run.verify();
      await run.push(pushTarget);
      await run.killed();
      expect(run.gitLeftovers().length).toBeGreaterThan(0);

      // 8. Everything at once, killed from outside at a moment timing picks.
      await run.start();
      await run.verify();
      const burst = [
        run.create(),
        run.create(false),
        run.remove(e),
        run.push(pushTarget),
        run.commit(fresh!),
        run.commit(fresh!),
        run.create(),
      ];
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 400));
      await run.kill();
      await Promise.allSettled(burst);

      // 9. A clean life: all of it checked once more, git's own check included, and a clean stop.
      await run.start();
      await run.verify({ fsck: true });
      expect(await run.create()).toBeDefined();
      await run.verify();
      await run.stop();
    },
    240_000,
  );
});
