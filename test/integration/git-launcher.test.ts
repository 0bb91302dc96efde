/**
 * Processes started through the launcher (src/git/launcher.ts): stdio passes through byte for byte,
 * end of file and exit codes are git's own, kill and cancel stop the process, a dead launcher is
 * replaced, and the server never forks for a git process.
 */
import { ChildProcess, execFile } from 'node:child_process';
import crypto from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { git, gitText, spawnGit } from '../../src/git/git.js';
import { launch, launcherPid, type GitProcess } from '../../src/git/launcher.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const exec = promisify(execFile);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-launcher-test-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Everything a process writes, and how it ended. */
function finished(child: GitProcess) {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  return new Promise<{ stdout: Buffer; stderr: string; code: number | null; signal: string | null }>(
    (resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code: number | null, signal: string | null) =>
        resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString(), code, signal }),
      );
    },
  );
}

async function repository(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(root, 'r-'));
  await git(['init', '--bare', '-q', dir]);
  return dir;
}

describe('processes started through the launcher', () => {
  it('pass binary stdin and stdout through byte for byte, and stdin end of file after the input', async () => {
    const data = crypto.randomBytes(3 * 1024 * 1024 + 17);
    const child = launch('cat', [], { PATH: process.env.PATH });
    const result = finished(child);
    child.stdin.end(data);
    const { stdout, code } = await result;
    expect(code).toBe(0);
    expect(stdout.equals(data)).toBe(true);
    expect(child.pid).toBeGreaterThan(0);
  });

  it('write and read back git objects larger than any pipe buffer', async () => {
    const dir = await repository();
    const blob = crypto.randomBytes(20 * 1024 * 1024);
    const id = (await git(['hash-object', '-w', '--stdin'], { gitDir: dir, input: blob })).stdout
      .toString()
      .trim();
    const expected = crypto.createHash('sha1').update(`blob ${blob.length}\0`).update(blob).digest('hex');
    expect(id).toBe(expected);
    const { stdout, code } = await finished(spawnGitEnded(['cat-file', 'blob', id], dir));
    expect(code).toBe(0);
    expect(stdout.equals(blob)).toBe(true);
  });

  it("report git's exit code and stderr", async () => {
    const dir = await repository();
    const result = await finished(spawnGitEnded(['rev-parse', '--verify', 'nowhere'], dir));
    expect(result.code).toBe(128);
    expect(result.stderr).toMatch(/fatal: Needed a single revision/);
    const exit3 = await finished(endedInput(launch('sh', ['-c', 'exit 3'], { PATH: process.env.PATH })));
    expect(exit3).toMatchObject({ code: 3, signal: null });
  });

  it('fail as a spawn fails when the program does not exist', async () => {
    const child = launch('forge-no-such-program', [], { PATH: process.env.PATH });
    const failed = new Promise<NodeJS.ErrnoException>((resolve) => child.on('error', resolve));
    const closed = new Promise((resolve) => child.on('close', resolve));
    expect((await failed).code).toBe('ENOENT');
    await closed;
  });

  it('stop on kill, with the signal reported', async () => {
    const child = launch('sleep', ['30'], { PATH: process.env.PATH });
    const result = finished(child);
    await new Promise((resolve) => child.once('spawn', resolve));
    const pid = child.pid!;
    expect(child.kill()).toBe(true);
    expect(await result).toMatchObject({ code: null, signal: 'SIGTERM' });
    expect(child.signalCode).toBe('SIGTERM');
    expect(
      await waitFor(
        async () => alive(pid),
        (living) => !living,
      ),
    ).toBe(false);
  });

  it('stop when the reader of their output goes away', async () => {
    const dir = await repository();
    const id = await gitText(['hash-object', '-w', '--stdin'], {
      gitDir: dir,
      input: crypto.randomBytes(32 * 1024 * 1024),
    });
    const child = spawnGitEnded(['cat-file', 'blob', id], dir);
    const closed = new Promise<unknown[]>((resolve) => child.on('close', (...args) => resolve(args)));
    await new Promise((resolve) => child.stdout.once('data', resolve));
    child.stdout.destroy();
    const [code, signal] = await closed;
    expect(code === 0 && signal === null).toBe(false);
  });

  it('end, never hang, when a stream is closed before the process started', async () => {
    const child = launch('cat', [], { PATH: process.env.PATH });
    const closed = new Promise<unknown[]>((resolve) => child.on('close', (...args) => resolve(args)));
    child.stdout.destroy();
    expect(await closed).toEqual([null, 'SIGKILL']);
  });

  it('answer 404 for a repository that is gone', async () => {
    const dir = await repository();
    fs.rmSync(dir, { recursive: true });
    await expect(git(['rev-parse', 'HEAD'], { gitDir: dir })).rejects.toMatchObject({ status: 404 });
  });

  it('run many at once, each with its own input and output', async () => {
    const inputs = Array.from({ length: 150 }, (_, i) => `input ${i}\n`.repeat(i + 1));
    const ids = await Promise.all(inputs.map((input) => gitText(['hash-object', '--stdin'], { input })));
    ids.forEach((id, i) => {
      const expected = crypto
        .createHash('sha1')
        .update(`blob ${inputs[i].length}\0${inputs[i]}`)
        .digest('hex');
      expect(id).toBe(expected);
    });
  });

  it('never fork this process for a git process', async () => {
    await gitText(['--version']);
    // Every spawn of node (exec and execFile too) goes through this internal method.
    const prototype = ChildProcess.prototype as unknown as { spawn: (...args: unknown[]) => unknown };
    const original = prototype.spawn;
    let forks = 0;
    prototype.spawn = function counted(this: ChildProcess, ...args: unknown[]) {
      forks++;
      return original.apply(this, args);
    };
    try {
      await Promise.all(Array.from({ length: 20 }, () => gitText(['--version'])));
    } finally {
      prototype.spawn = original;
    }
    expect(forks).toBe(0);
    expect(launcherPid()).toBeGreaterThan(0);
  });

  it('survive the death of the launcher: running processes end as killed, later ones run', async () => {
    await gitText(['--version']);
    const first = launcherPid()!;
    const child = launch('sleep', ['30'], { PATH: process.env.PATH });
    const result = finished(child);
    await new Promise((resolve) => child.once('spawn', resolve));
    process.kill(first, 'SIGKILL');
    expect(await result).toMatchObject({ code: null, signal: 'SIGKILL' });
    expect(await gitText(['--version'])).toMatch(/^git version/);
    expect(launcherPid()).not.toBe(first);
    // Its orphan lost its stdio and stops on its own, or is a leftover `sleep` that ends anyway.
  });
});

describe('the launcher and the process that started it', () => {
  const script = (body: string) => [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    `import { launcherPid } from './src/git/launcher.ts'; import { gitText } from './src/git/git.ts'; ${body}`,
  ];

  it('never keeps a finished process alive', async () => {
    const started = Date.now();
    const { stdout } = await exec(
      process.execPath,
      script(`console.log(await gitText(['--version']), launcherPid() > 0);`),
      { timeout: 20_000 },
    );
    expect(stdout).toMatch(/^git version .* true\n$/);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('exits when that process is killed', async () => {
    const { stdout } = await exec(
      process.execPath,
      script(
        `await gitText(['--version']); console.log(launcherPid()); process.kill(process.pid, 'SIGKILL');`,
      ),
    ).catch((err: { stdout: string }) => err);
    const pid = Number(stdout.trim());
    expect(pid).toBeGreaterThan(0);
    expect(
      await waitFor(
        async () => alive(pid),
        (living) => !living,
      ),
    ).toBe(false);
  });
});

describe('with a server', () => {
  const server = useTestServer();
  const { work, gitCli } = useGitWorkDir('forge-launcher-push-');

  it('present an API commit from the object just written, as a read of it with git log does', async () => {
    const owner = await server.factories.user();
    const created = await server.request('POST', '/projects', {
      token: owner.token,
      json: { name: 'presented', initialize_with_readme: true },
    });
    const project = created.body as { id: number };
    const launched: string[][] = [];
    const channel = diagnostics.tracingChannel('forge:process:launch');
    const watch = {
      start: (context: unknown) => launched.push((context as { args: string[] }).args),
      end: () => undefined,
      asyncStart: () => undefined,
      asyncEnd: () => undefined,
      error: () => undefined,
    };
    const commit = (message: string, authorName: string) =>
      server.request('POST', `/projects/${project.id}/repository/commits`, {
        token: owner.token,
        json: {
          branch: 'main',
          commit_message: message,
          author_name: authorName,
          author_email: '<ada@example.com>',
          actions: [{ action: 'create', file_path: `${message.length}.txt`, content: message }],
        },
      });
    channel.subscribe(watch);
    let plain;
    try {
      plain = await commit('fix: a title\n\nand a body  \n', ' Ada. ');
    } finally {
      channel.unsubscribe(watch);
    }
    expect(plain.status, plain.text).toBe(201);
    // No `git log` reads the commit's message back (the stats are still git's own).
    expect(launched.some((args) => args.some((arg) => arg.includes('%B')))).toBe(false);
    const withTrailer = await commit('Add b\n\nSigned-off-by: Ada <ada@example.com>\n', 'Ada');
    expect(withTrailer.body).toMatchObject({ trailers: { 'Signed-off-by': 'Ada <ada@example.com>' } });
    for (const made of [plain, withTrailer]) {
      const id = (made.body as { id: string }).id;
      const read = await server.request('GET', `/projects/${project.id}/repository/commits/${id}`, {
        token: owner.token,
      });
      expect(made.body).toEqual(read.body);
    }
    expect(plain.body).toMatchObject({ author_name: 'Ada', author_email: 'ada@example.com' });
  });

  it('are offered by a repository that has no setting for them', async () => {
    const owner = await server.factories.user();
    const created = await server.request('POST', '/projects', {
      token: owner.token,
      json: { name: 'push-options', initialize_with_readme: true },
    });
    const project = created.body as { id: number; path_with_namespace: string };
    const dir = server.services.storage.diskPath('default', project.id);
    await git(['config', '--unset-all', 'receive.advertisePushOptions'], { gitDir: dir, okCodes: [5] });
    const clone = path.join(work, 'clone');
    const url = remoteUrl(server.url, project.path_with_namespace, owner.token);
    expect((await gitCli(['clone', '-q', url, clone])).ok).toBe(true);
    fs.writeFileSync(path.join(clone, 'a.txt'), 'a\n');
    await gitCli(['add', 'a.txt'], clone);
    await gitCli(['commit', '-q', '-m', 'a'], clone);
    const pushed = await gitCli(['push', '-q', '-o', 'ci.skip', 'origin', 'HEAD:main'], clone);
    expect(pushed.ok, pushed.stderr).toBe(true);
  });
});

/** spawnGit with its stdin closed at once. */
function spawnGitEnded(args: string[], dir: string): GitProcess {
  return endedInput(spawnGit(args, { gitDir: dir }));
}

function endedInput(child: GitProcess): GitProcess {
  child.stdin.end();
  return child;
}
