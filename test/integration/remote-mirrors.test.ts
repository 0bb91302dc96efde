/**
 * Push mirrors that really push: to another project of this server over HTTP (credentials in the URL),
 * and to a throwaway sshd with the mirror's own key. Pushes over git and through the API both trigger
 * them; the switches (protected branches, a branch regex, divergent refs) and the retries after an
 * outage are checked on the remote's refs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { git } from '../../src/git/git.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { serverPort } from '../helpers/process.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({
  env: { FORGE_JOB_POLL: '0.5', FORGE_ALLOW_LOCAL_REQUESTS: 'true', FORGE_SECRET_KEY: 'mirror-test-key' },
});
const { work, gitCli } = useGitWorkDir('forge-mirror-');
const cleanups: Array<() => void> = [];
afterAll(() => cleanups.forEach((cleanup) => cleanup()));

type Json = Record<string, unknown>;

async function until<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const dirOf = (project: Project) => server.services.storage.diskPath(project.repositoryStorage, project.id);

/** Branches and tags of a bare repository, `ref sha` per ref. */
async function refsOf(dir: string): Promise<Record<string, string>> {
  const out = (
    await git(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags'], {
      gitDir: dir,
    })
  ).stdout.toString();
  return Object.fromEntries(
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ') as [string, string]),
  );
}

async function fullPath(project: Project, token: string): Promise<string> {
  const response = await server.request('GET', `/projects/${project.id}`, { token });
  return (response.body as Json).path_with_namespace as string;
}

/** A source project with a README and a target project, both the owner's; the mirror URL carries a token. */
async function pair(): Promise<{
  owner: TestUser;
  source: Project;
  target: Project;
  url: string;
  secret: string;
}> {
  const { owner, project: source } = await server.factories.ownedProjectWithReadme();
  const target = await server.factories.project({ owner });
  const secret = await server.factories.token(owner.user, ['api', 'write_repository']);
  const url = remoteUrl(server.url, await fullPath(target, owner.token), secret).replace(
    'anyone',
    'mirror-bot',
  );
  return { owner, source, target, url, secret };
}

async function createMirror(project: Project, token: string, body: Json): Promise<Json> {
  const response = await server.request('POST', `/projects/${project.id}/remote_mirrors`, {
    token,
    json: body,
  });
  expect(response.status, response.text).toBe(201);
  return response.body as Json;
}

const mirrorState = async (project: Project, id: unknown, token: string) =>
  (await server.request('GET', `/projects/${project.id}/remote_mirrors/${id}`, { token })).body as Json;

/** Waits for the mirror to settle in `status` after `since` (an update that started after it). */
async function settled(
  project: Project,
  id: unknown,
  token: string,
  status: string,
  since: number,
): Promise<Json> {
  return until(async () => {
    const state = await mirrorState(project, id, token);
    const started = state.last_update_started_at ? Date.parse(state.last_update_started_at as string) : 0;
    return state.update_status === status && started >= since - 1000 ? state : undefined;
  });
}

/** A local clone of the project, to push from with the real git. */
async function clone(project: Project, owner: TestUser): Promise<{ dir: string; origin: string }> {
  const origin = remoteUrl(server.url, await fullPath(project, owner.token), owner.token);
  const dir = path.join(work, crypto.randomUUID());
  const cloned = await gitCli(['clone', '-q', origin, dir]);
  expect(cloned.ok, cloned.stderr).toBe(true);
  return { dir, origin };
}

async function commitAndPush(dir: string, branch: string, file: string, extra: string[] = []): Promise<void> {
  await gitCli(['checkout', '-q', '-B', branch], dir);
  fs.writeFileSync(path.join(dir, file), crypto.randomUUID());
  await gitCli(['add', file], dir);
  await gitCli(['commit', '-q', '-m', `Add ${file}`], dir);
  const pushed = await gitCli(['push', '-q', 'origin', branch, ...extra], dir);
  expect(pushed.ok, pushed.stderr).toBe(true);
}

describe('push mirror over HTTP', { timeout: 120_000 }, () => {
  it('receives every branch and tag after a git push, and after an API push and a branch deletion', async () => {
    const { owner, source, target, url, secret } = await pair();
    const mirror = await createMirror(source, owner.token, { url, enabled: true });
    expect(mirror.url).toMatch(/^http:\/\/\*{5}:\*{5}@127\.0\.0\.1:\d+\//);
    expect(JSON.stringify(mirror)).not.toContain(secret);
    expect(mirror).toMatchObject({ enabled: true, auth_method: 'password', update_status: 'none' });

    const since = Date.now();
    const { dir } = await clone(source, owner);
    await gitCli(['tag', '-a', 'v1.0', '-m', 'Release'], dir);
    await gitCli(['tag', 'light'], dir);
    await commitAndPush(dir, 'feature', 'feature.txt', ['--tags']);
    const done = await settled(source, mirror.id, owner.token, 'finished', since);
    expect(done.last_error).toBeNull();
    expect(done.last_successful_update_at).toBe(done.last_update_at);
    expect(await refsOf(dirOf(target))).toEqual(await refsOf(dirOf(source)));
    expect(Object.keys(await refsOf(dirOf(target))).sort()).toEqual([
      'refs/heads/feature',
      'refs/heads/main',
      'refs/tags/light',
      'refs/tags/v1.0',
    ]);

    // A commit through the API, then a branch deleted through the API.
    const before = Date.now();
    const api = await server.request('POST', `/projects/${source.id}/repository/commits`, {
      token: owner.token,
      json: {
        branch: 'from-api',
        start_branch: 'main',
        commit_message: 'API',
        actions: [{ action: 'create', file_path: 'api.txt', content: 'api' }],
      },
    });
    expect(api.status).toBe(201);
    await until(async () => (await refsOf(dirOf(target)))['refs/heads/from-api']);
    const deleted = await server.request('DELETE', `/projects/${source.id}/repository/branches/feature`, {
      token: owner.token,
    });
    expect(deleted.status).toBe(204);
    await until(async () => !(await refsOf(dirOf(target)))['refs/heads/feature']);
    await settled(source, mirror.id, owner.token, 'finished', before);
    expect(await refsOf(dirOf(target))).toEqual(await refsOf(dirOf(source)));
  });

  it('pushes only protected branches (and every tag) with only_protected_branches', async () => {
    const { owner, source, target, url } = await pair();
    const mirror = await createMirror(source, owner.token, {
      url,
      enabled: true,
      only_protected_branches: true,
    });
    await server.request('POST', `/projects/${source.id}/protected_branches`, {
      token: owner.token,
      json: { name: 'release-*' },
    });
    const since = Date.now();
    const { dir } = await clone(source, owner);
    await commitAndPush(dir, 'release-1', 'r.txt');
    await gitCli(['tag', 'v2'], dir);
    await commitAndPush(dir, 'topic', 't.txt', ['--tags']);
    await settled(source, mirror.id, owner.token, 'finished', since);
    // Wait out the update of the last push too.
    await until(async () => (await refsOf(dirOf(target)))['refs/tags/v2']);
    const mirrored = await refsOf(dirOf(target));
    expect(Object.keys(mirrored).sort()).toEqual(['refs/heads/main', 'refs/heads/release-1', 'refs/tags/v2']);
  });

  it('pushes only branches matching mirror_branch_regex (RE2), and refuses it with only_protected_branches', async () => {
    const { owner, source, target, url } = await pair();
    const refused = await server.request('POST', `/projects/${source.id}/remote_mirrors`, {
      token: owner.token,
      json: { url, only_protected_branches: true, mirror_branch_regex: '^stable' },
    });
    expect(refused.status).toBe(400);
    expect((refused.body as Json).message).toHaveProperty('mirror_branch_regex');
    const invalid = await server.request('POST', `/projects/${source.id}/remote_mirrors`, {
      token: owner.token,
      json: { url, mirror_branch_regex: '(?<=x)' },
    });
    expect(invalid.status).toBe(400);

    const mirror = await createMirror(source, owner.token, {
      url,
      enabled: true,
      mirror_branch_regex: '^stable',
    });
    expect(mirror.mirror_branch_regex).toBe('^stable');
    const { dir } = await clone(source, owner);
    await commitAndPush(dir, 'stable-1', 's.txt');
    await commitAndPush(dir, 'unstable', 'u.txt');
    await until(async () => (await refsOf(dirOf(target)))['refs/heads/stable-1']);
    const since = Date.now();
    await server.request('POST', `/projects/${source.id}/remote_mirrors/${mirror.id}/sync`, {
      token: owner.token,
    });
    await settled(source, mirror.id, owner.token, 'finished', since);
    expect(Object.keys(await refsOf(dirOf(target))).sort()).toEqual(['refs/heads/stable-1']);
  });

  it('skips and reports diverged refs with keep_divergent_refs, and deletes nothing', async () => {
    const { owner, source, target, url } = await pair();
    // First a plain mirror fills the target, then the target's main moves on its own.
    const first = await createMirror(source, owner.token, { url, enabled: true });
    const { dir } = await clone(source, owner);
    await commitAndPush(dir, 'doomed', 'd.txt');
    await until(async () => (await refsOf(dirOf(target)))['refs/heads/doomed']);
    await server.request('DELETE', `/projects/${source.id}/remote_mirrors/${first.id}`, {
      token: owner.token,
    });
    const diverged = await server.request('POST', `/projects/${target.id}/repository/commits`, {
      token: owner.token,
      json: {
        branch: 'main',
        commit_message: 'Only on the remote',
        actions: [{ action: 'create', file_path: 'remote.txt', content: 'r' }],
      },
    });
    expect(diverged.status).toBe(201);
    const remoteMain = (await refsOf(dirOf(target)))['refs/heads/main'];

    const mirror = await createMirror(source, owner.token, { url, enabled: true, keep_divergent_refs: true });
    expect(mirror.keep_divergent_refs).toBe(true);
    const since = Date.now();
    await commitAndPush(dir, 'main', 'local.txt');
    await gitCli(['push', '-q', 'origin', '--delete', 'doomed'], dir);
    await commitAndPush(dir, 'fresh', 'f.txt');
    const failed = await settled(source, mirror.id, owner.token, 'failed', since);
    expect(failed.last_error).toContain('Some refs have diverged and have not been updated on the remote');
    expect(failed.last_error).toContain('refs/heads/main');
    const after = await refsOf(dirOf(target));
    expect(after['refs/heads/main']).toBe(remoteMain);
    expect(after['refs/heads/doomed']).toBeDefined();
    await until(
      async () =>
        (await refsOf(dirOf(target)))['refs/heads/fresh'] ===
        (await refsOf(dirOf(source)))['refs/heads/fresh'],
    );

    // Without keep_divergent_refs the local main wins (the target's main is unprotected for that) and
    // the branch deleted here goes there too.
    await server.request('DELETE', `/projects/${target.id}/protected_branches/main`, { token: owner.token });
    const put = await server.request('PUT', `/projects/${source.id}/remote_mirrors/${mirror.id}`, {
      token: owner.token,
      json: { keep_divergent_refs: false },
    });
    expect((put.body as Json).keep_divergent_refs).toBe(false);
    const again = Date.now();
    await server.request('POST', `/projects/${source.id}/remote_mirrors/${mirror.id}/sync`, {
      token: owner.token,
    });
    const finished = await settled(source, mirror.id, owner.token, 'finished', again);
    expect(finished.last_error).toBeNull();
    expect(await refsOf(dirOf(target))).toEqual(await refsOf(dirOf(source)));
  });

  it('retries with backoff through an outage of the remote, then finishes', async () => {
    const { owner, source, target, url } = await pair();
    // The mirror points at a port where nothing listens yet; a proxy to the server opens there later.
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const serverPort = Number(new URL(server.url).port);
    const outageUrl = url.replace(`:${serverPort}/`, `:${port}/`);
    const mirror = await createMirror(source, owner.token, { url: outageUrl, enabled: true });
    const since = Date.now();
    await server.request('POST', `/projects/${source.id}/remote_mirrors/${mirror.id}/sync`, {
      token: owner.token,
    });
    const retrying = await settled(source, mirror.id, owner.token, 'to_retry', since);
    expect(retrying.last_error).toMatch(/Failed to connect|Connection refused|Could not connect/i);
    expect(retrying.last_successful_update_at).toBeNull();

    const proxy = net.createServer((client) => {
      const upstream = net.connect(serverPort, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    cleanups.push(() => proxy.close());
    const done = await until(async () => {
      const state = await mirrorState(source, mirror.id, owner.token);
      return state.update_status === 'finished' ? state : undefined;
    }, 90_000);
    expect(done.last_error).toBeNull();
    expect(Date.parse(done.last_successful_update_at as string)).toBeGreaterThan(since);
    expect(await refsOf(dirOf(target))).toEqual(await refsOf(dirOf(source)));
  });
});

const SSHD = '/usr/sbin/sshd';

describe.runIf(fs.existsSync(SSHD))('push mirror over SSH', { timeout: 120_000 }, () => {
  let sshd: ChildProcess | undefined;
  afterAll(() => sshd?.kill('SIGTERM'));

  it('pushes to an sshd that trusts the mirror’s generated key, and records its host key', async () => {
    const { owner, project: source } = await server.factories.ownedProjectWithReadme();
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-sshd-'));
    cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
    const remote = path.join(base, 'remote.git');
    await git(['init', '-q', '--bare', remote]);
    const port = serverPort();
    const user = os.userInfo().username;

    const mirror = await createMirror(source, owner.token, {
      url: `ssh://${user}@127.0.0.1:${port}${remote}`,
      auth_method: 'ssh_public_key',
      enabled: true,
    });
    expect(mirror.url).toBe(`ssh://*****@127.0.0.1:${port}${remote}`);
    expect(mirror.auth_method).toBe('ssh_public_key');
    expect(mirror.host_keys).toEqual([]);
    const key = await server.request('GET', `/projects/${source.id}/remote_mirrors/${mirror.id}/public_key`, {
      token: owner.token,
    });
    expect(key.status).toBe(200);
    const publicKey = (key.body as Json).public_key as string;
    expect(publicKey).toMatch(/^ssh-ed25519 AAAA[A-Za-z0-9+/]+=* /);

    const hostKey = path.join(base, 'host_ed25519');
    const keygen = spawn('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
    await new Promise((resolve) => keygen.on('exit', resolve));
    fs.writeFileSync(path.join(base, 'authorized_keys'), `${publicKey}\n`, { mode: 0o600 });
    fs.writeFileSync(
      path.join(base, 'sshd_config'),
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKey}`,
        `AuthorizedKeysFile ${path.join(base, 'authorized_keys')}`,
        `PidFile ${path.join(base, 'sshd.pid')}`,
        'StrictModes no',
        'UsePAM no',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        'PermitRootLogin prohibit-password',
      ].join('\n'),
    );
    // sshd run by root needs its privilege separation directory.
    if (process.getuid?.() === 0) fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    sshd = spawn(SSHD, ['-D', '-e', '-f', path.join(base, 'sshd_config')], { stdio: 'pipe' });
    let log = '';
    sshd.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    await until(
      () =>
        new Promise<boolean>((resolve) => {
          const socket = net.connect(port, '127.0.0.1', () => {
            socket.destroy();
            resolve(true);
          });
          socket.on('error', () => resolve(false));
        }),
      10_000,
    );

    const since = Date.now();
    const { dir } = await clone(source, owner);
    await gitCli(['tag', 'v1'], dir);
    await commitAndPush(dir, 'ssh-branch', 's.txt', ['--tags']);
    const done = await settled(source, mirror.id, owner.token, 'finished', since).catch((err: Error) => {
      throw new Error(`${err.message}; sshd said: ${log}`);
    });
    expect(done.last_error).toBeNull();
    expect(await refsOf(remote)).toEqual(await refsOf(dirOf(source)));
    // The host key seen first is recorded, and enforced from then on.
    expect((done.host_keys as Array<{ fingerprint_sha256: string }>)[0].fingerprint_sha256).toMatch(
      /^SHA256:/,
    );

    // Host keys given through `host_keys` are enforced: another server's key fails the connection, the
    // server's own (bare, so it is given the URL's [host]:port) lets it through.
    const stranger = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAfuCHKVTjquxvt6CM6tdG4SLp1Btn/nOeHHE5UOzRdf';
    const ownKey = fs.readFileSync(`${hostKey}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
    for (const [hostKeys, status] of [
      [[stranger], 'to_retry'],
      [[ownKey], 'finished'],
    ] as const) {
      const pinned = await createMirror(source, owner.token, {
        url: `ssh://${user}@127.0.0.1:${port}${remote}`,
        auth_method: 'ssh_public_key',
        enabled: true,
        host_keys: hostKeys,
      });
      const key = (
        await server.request('GET', `/projects/${source.id}/remote_mirrors/${pinned.id}/public_key`, {
          token: owner.token,
        })
      ).body as Json;
      fs.appendFileSync(path.join(base, 'authorized_keys'), `${key.public_key as string}\n`);
      const at = Date.now();
      await server.request('POST', `/projects/${source.id}/remote_mirrors/${pinned.id}/sync`, {
        token: owner.token,
      });
      const state = await settled(source, pinned.id, owner.token, status, at);
      if (status === 'to_retry') expect(state.last_error).toMatch(/Host key verification failed/);
    }
  });
});

describe('remote mirror API rules', () => {
  it('answers GitLab’s errors and keeps password mirrors without a public key', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const route = `/projects/${project.id}/remote_mirrors`;
    const ftp = await server.request('POST', route, {
      token: owner.token,
      json: { url: 'ftp://a:b@example.com/x' },
    });
    expect(ftp.status).toBe(400);
    expect(ftp.body).toEqual({
      message: { url: ['is blocked: Only allowed schemes are http, https, ssh, git'] },
    });
    const badMethod = await server.request('POST', route, {
      token: owner.token,
      json: { url: 'https://a:b@example.com/x', auth_method: 'invalid' },
    });
    expect(badMethod.status).toBe(400);

    const mirror = await createMirror(project, owner.token, { url: 'https://bot:pw@mirror.invalid/x.git' });
    expect(mirror).toMatchObject({
      enabled: false,
      update_status: 'none',
      url: 'https://*****:*****@mirror.invalid/x.git',
    });
    const key = await server.request('GET', `${route}/${mirror.id}/public_key`, { token: owner.token });
    expect(key.status).toBe(404);
    const sync = await server.request('POST', `${route}/${mirror.id}/sync`, { token: owner.token });
    expect(sync.status).toBe(400);
    expect((sync.body as Json).message).toMatch(/Cannot proceed with the push mirroring/);

    const hostKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAfuCHKVTjquxvt6CM6tdG4SLp1Btn/nOeHHE5UOzRdf';
    const withKeys = await server.request('PUT', `${route}/${mirror.id}`, {
      token: owner.token,
      json: { host_keys: [hostKey], auth_method: 'ssh_public_key' },
    });
    expect(withKeys.status).toBe(200);
    expect((withKeys.body as Json).host_keys).toHaveLength(1);
    const pub = await server.request('GET', `${route}/${mirror.id}/public_key`, { token: owner.token });
    expect(pub.status).toBe(200);
    const badKey = await server.request('PUT', `${route}/${mirror.id}`, {
      token: owner.token,
      json: { host_keys: ['invalid_key'] },
    });
    expect(badKey.status).toBe(400);
    expect((badKey.body as Json).message).toContain('Invalid SSH host key');

    const list = await server.request('GET', route, { token: owner.token });
    expect(list.status).toBe(200);
    expect((list.body as Json[]).map((m) => m.id)).toEqual([mirror.id]);
    expect(list.headers.get('x-total')).toBe('1');

    const developer = await server.factories.memberOf(project, 30);
    const refused = await server.request('GET', route, { token: developer.token });
    expect(refused.status).toBe(401);

    expect((await server.request('DELETE', `${route}/${mirror.id}`, { token: owner.token })).status).toBe(
      204,
    );
    expect((await server.request('GET', `${route}/${mirror.id}`, { token: owner.token })).status).toBe(404);
  });

  it.each([
    ['a malformed escape in the user info', { url: 'https://%E0%A4%A:x@mirror.invalid/x.git' }, 'url'],
    ['a line break in the password', { url: 'https://bot:a%0Ab@mirror.invalid/x.git' }, 'url'],
    ['a user name that reads as an option', { url: 'ssh://-oProxyCommand=x@mirror.invalid/x.git' }, 'url'],
    ['no URL at all', { url: 'not a url' }, 'url'],
    ['an SCP-style address', { url: 'git@mirror.invalid:group/x.git' }, 'url'],
    [
      'a regex RE2 refuses',
      { url: 'https://mirror.invalid/x.git', mirror_branch_regex: '(a' },
      'mirror_branch_regex',
    ],
    [
      'an unreadable host key',
      { url: 'ssh://git@mirror.invalid/x.git', host_keys: ['ssh-ed25519 nope'] },
      null,
    ],
    ['eleven host keys', { url: 'ssh://git@mirror.invalid/x.git', host_keys: Array(11).fill('x') }, null],
    ['a missing url', { enabled: true }, null],
  ])('refuses %s with 400', async (_label, body, field) => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const response = await server.request('POST', `/projects/${project.id}/remote_mirrors`, {
      token: owner.token,
      json: body,
    });
    expect(response.status, response.text).toBe(400);
    if (field) expect((response.body as Json).message).toHaveProperty(field);
    const list = await server.request('GET', `/projects/${project.id}/remote_mirrors`, {
      token: owner.token,
    });
    expect(list.body).toEqual([]);
  });

  it('finds mirrors only in their own project', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const other = await server.factories.project({ owner });
    const mirror = await createMirror(project, owner.token, { url: 'https://mirror.invalid/x.git' });
    for (const route of [
      `/projects/${other.id}/remote_mirrors/${mirror.id}`,
      `/projects/${project.id}/remote_mirrors/2147483648`,
      `/projects/${project.id}/remote_mirrors/999999`,
    ])
      expect((await server.request('GET', route, { token: owner.token })).status).toBe(404);
    const sync = await server.request('POST', `/projects/${other.id}/remote_mirrors/${mirror.id}/sync`, {
      token: owner.token,
    });
    expect(sync.status).toBe(404);
  });

  it('keeps credentials encrypted in the database', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const password = `pw-${crypto.randomUUID()}`;
    const mirror = await createMirror(project, owner.token, {
      url: `https://bot:${password}@mirror.invalid/x.git`,
    });
    const rows = (await server.dataSource.query('SELECT * FROM remote_mirrors WHERE id = $1', [
      mirror.id,
    ])) as Json[];
    expect(JSON.stringify(rows)).not.toContain(password);
    expect(rows[0].encrypted_credentials).toMatch(/^v1:/);
  });
});
