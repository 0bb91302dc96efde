/** Plain `git` against the running server: clone, fetch and push over smart HTTP, with protected branches. */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Member } from '../../src/members/member.entity.js';
import { AccessLevel } from '../../src/core/access-level.js';
import {
  ProtectedBranch,
  ProtectedBranchAccessLevel,
} from '../../src/protected_branches/protected-branch.entity.js';
import { gitText } from '../../src/git/git.js';
import type { TestUser } from '../helpers/factories.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const { work, gitCli } = useGitWorkDir('forge-git-');

type Json = Record<string, unknown>;
let counter = 0;

const remote = (fullPath: string, token?: string) => remoteUrl(server.url, fullPath, token);

/** A project with a README on main, and a clone of it made by `user`. */
async function clonedProject(user: TestUser, attrs: Json = {}) {
  const owner = await server.factories.user();
  const created = await server.request('POST', '/projects', {
    token: owner.token,
    json: { name: `repo-${++counter}`, initialize_with_readme: true, ...attrs },
  });
  const project = created.body as Json & { id: number; path_with_namespace: string };
  const dir = path.join(work, `clone-${counter}`);
  return { owner, project, dir, url: remote(project.path_with_namespace, user.token) };
}

async function commitFile(dir: string, name: string, text: string) {
  fs.writeFileSync(path.join(dir, name), text);
  await gitCli(['add', name], dir);
  await gitCli(['commit', '-q', '-m', `add ${name}`], dir);
}

const addProjectMember = (projectId: number, user: TestUser, accessLevel: number) =>
  server.dataSource
    .getRepository(Member)
    .insert({ sourceType: 'Project', sourceId: projectId, userId: user.user.id, accessLevel });

const repositoryOf = (projectId: number) => server.services.storage.diskPath('default', projectId);

describe('clone and fetch', () => {
  it('clones with a token as the Basic password, over protocol v2 and v0', async () => {
    const user = await server.factories.user();
    const { project, dir, url, owner } = await clonedProject(user);
    await addProjectMember(project.id, user, AccessLevel.Reporter);
    const v2 = await gitCli(['-c', 'protocol.version=2', 'clone', '-q', url, dir]);
    expect(v2.ok, v2.stderr).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'README.md'), 'utf8')).toBe(`# ${project.name}\n`);
    const v0 = await gitCli([
      '-c',
      'protocol.version=0',
      'clone',
      '-q',
      remote(project.path_with_namespace, owner.token),
      `${dir}-v0`,
    ]);
    expect(v0.ok, v0.stderr).toBe(true);
    const fetched = await gitCli(['fetch', '-q', 'origin'], dir);
    expect(fetched.ok, fetched.stderr).toBe(true);
  });

  it.each([
    ['public', true],
    ['internal', false],
    ['private', false],
  ])('a %s project, anonymously: clone works=%s', async (visibility, works) => {
    const owner = await server.factories.user();
    const created = await server.request('POST', '/projects', {
      token: owner.token,
      json: { name: `anon-${++counter}`, visibility, initialize_with_readme: true },
    });
    const result = await gitCli([
      'clone',
      '-q',
      remote((created.body as Json).path_with_namespace as string),
      path.join(work, `anon-${counter}`),
    ]);
    expect(result.ok).toBe(works);
    if (!works) expect(result.stderr).toMatch(/could not read Username|Authentication failed/);
  });

  it('asks anonymous callers for credentials, and hides private projects from outsiders', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.project({ owner, visibility: 'private' });
    const fullPath = `${owner.user.username}/${project.path}`;
    const refs = `${server.url}/${fullPath}.git/info/refs?service=git-upload-pack`;
    const anonymous = await fetch(refs);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="GitLab"');
    const outsider = await server.factories.user();
    const basic = (token: string) => ({
      Authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}`,
    });
    const hidden = await fetch(refs, { headers: basic(outsider.token) });
    expect(hidden.status).toBe(404);
    const bad = await fetch(refs, { headers: basic('glpat-wrong') });
    expect(bad.status).toBe(401);
    const readApiOnly = await server.factories.token(owner.user, ['read_api']);
    const scoped = await fetch(refs, { headers: basic(readApiOnly) });
    expect(scoped.status).toBe(403);
    const repoScope = await server.factories.token(owner.user, ['read_repository']);
    const ok = await fetch(refs, { headers: basic(repoScope) });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement');
    expect((await ok.text()).startsWith('001e# service=git-upload-pack\n0000')).toBe(true);
  });

  it('accepts a gzip-encoded upload-pack request', async () => {
    const { project, owner } = await clonedProject(await server.factories.user());
    const head = await gitText(['rev-parse', 'main'], { gitDir: repositoryOf(project.id) });
    const want = `want ${head} ofs-delta\n`;
    const request = `${(want.length + 4).toString(16).padStart(4, '0')}${want}00000009done\n`;
    const response = await fetch(`${server.url}/${project.path_with_namespace}.git/git-upload-pack`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`x:${owner.token}`).toString('base64')}`,
        'Content-Type': 'application/x-git-upload-pack-request',
        'Content-Encoding': 'gzip',
      },
      body: zlib.gzipSync(request),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-git-upload-pack-result');
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.subarray(0, 8).toString()).toBe('0008NAK\n');
    expect(body.includes(Buffer.from('PACK'))).toBe(true);
  });
});

describe('push', () => {
  async function memberClone(level: number) {
    const user = await server.factories.user();
    const setup = await clonedProject(user);
    await addProjectMember(setup.project.id, user, level);
    const cloned = await gitCli(['clone', '-q', setup.url, setup.dir]);
    expect(cloned.ok, cloned.stderr).toBe(true);
    return { ...setup, user };
  }

  it('lets a Developer push a new branch, and records the push', async () => {
    const { dir, project, user } = await memberClone(AccessLevel.Developer);
    await gitCli(['checkout', '-q', '-b', 'feature'], dir);
    await commitFile(dir, 'feature.txt', 'new\n');
    const pushed = await gitCli(['push', '-q', 'origin', 'feature'], dir);
    expect(pushed.ok, pushed.stderr).toBe(true);
    const after = await gitText(['rev-parse', 'refs/heads/feature'], { gitDir: repositoryOf(project.id) });
    expect(after).toBe((await gitCli(['rev-parse', 'HEAD'], dir)).stdout.trim());
    const events = await server.dataSource.query(
      'SELECT ref, before_sha, after_sha, user_id, via FROM push_events WHERE project_id = $1',
      [project.id],
    );
    expect(events).toEqual([
      {
        ref: 'refs/heads/feature',
        before_sha: '0'.repeat(40),
        after_sha: after,
        user_id: user.user.id,
        via: 'git',
      },
    ]);
  });

  it('refuses a Developer push to the protected default branch, moving no ref', async () => {
    const { dir, project } = await memberClone(AccessLevel.Developer);
    const before = await gitText(['rev-parse', 'main'], { gitDir: repositoryOf(project.id) });
    await commitFile(dir, 'x.txt', 'x\n');
    await gitCli(['checkout', '-q', '-b', 'side'], dir);
    const refused = await gitCli(['push', 'origin', 'main', 'side'], dir);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(
      'remote: GitLab: You are not allowed to push code to protected branches on this project.',
    );
    expect(refused.stderr).toContain('pre-receive hook declined');
    expect(await gitText(['rev-parse', 'main'], { gitDir: repositoryOf(project.id) })).toBe(before);
    // One refused ref refuses the whole push: `side` did not land either.
    expect(await gitText(['for-each-ref', '--format=%(refname)'], { gitDir: repositoryOf(project.id) })).toBe(
      'refs/heads/main',
    );
    const events = await server.dataSource.query(
      'SELECT count(*)::int AS n FROM push_events WHERE project_id = $1',
      [project.id],
    );
    expect(events[0].n).toBe(0);
  });

  it('lets a Maintainer push, refuses a force push, then allows it with allow_force_push', async () => {
    const { dir, project } = await memberClone(AccessLevel.Maintainer);
    await commitFile(dir, 'a.txt', 'a\n');
    expect((await gitCli(['push', '-q', 'origin', 'main'], dir)).ok).toBe(true);

    await gitCli(['reset', '-q', '--hard', 'HEAD~1'], dir);
    await commitFile(dir, 'b.txt', 'b\n');
    const forced = await gitCli(['push', '--force', 'origin', 'main'], dir);
    expect(forced.ok).toBe(false);
    expect(forced.stderr).toContain(
      'remote: GitLab: You are not allowed to force push code to a protected branch on this project.',
    );

    await server.dataSource
      .getRepository(ProtectedBranch)
      .update({ projectId: project.id }, { allowForcePush: true });
    const allowed = await gitCli(['push', '-q', '--force', 'origin', 'main'], dir);
    expect(allowed.ok, allowed.stderr).toBe(true);
    expect(await gitText(['rev-parse', 'main'], { gitDir: repositoryOf(project.id) })).toBe(
      (await gitCli(['rev-parse', 'HEAD'], dir)).stdout.trim(),
    );
  });

  it('refuses to delete the default branch, or a protected branch, by push', async () => {
    const { dir, project } = await memberClone(AccessLevel.Owner);
    const defaultBranch = await gitCli(['push', 'origin', ':main'], dir);
    expect(defaultBranch.ok).toBe(false);
    expect(defaultBranch.stderr).toContain(
      'remote: GitLab: The default branch of a project cannot be deleted.',
    );

    expect((await gitCli(['push', '-q', 'origin', 'main:stable'], dir)).ok).toBe(true);
    const rule = await server.dataSource
      .getRepository(ProtectedBranch)
      .save({ projectId: project.id, name: 'stable' });
    await server.dataSource
      .getRepository(ProtectedBranchAccessLevel)
      .insert({ protectedBranchId: rule.id, action: 'push', accessLevel: AccessLevel.Maintainer });
    const protectedBranch = await gitCli(['push', 'origin', ':stable'], dir);
    expect(protectedBranch.ok).toBe(false);
    expect(protectedBranch.stderr).toContain(
      'You can only delete protected branches using the web interface.',
    );
  });

  it('applies wildcard rules, such as release/* with no one allowed to push', async () => {
    const { dir, project } = await memberClone(AccessLevel.Maintainer);
    const rule = await server.dataSource
      .getRepository(ProtectedBranch)
      .save({ projectId: project.id, name: 'release/*' });
    await server.dataSource.getRepository(ProtectedBranchAccessLevel).insert([
      { protectedBranchId: rule.id, action: 'push', accessLevel: 0 },
      { protectedBranchId: rule.id, action: 'merge', accessLevel: AccessLevel.Maintainer },
    ]);
    await gitCli(['checkout', '-q', '-b', 'release/1.0'], dir);
    // Creating it is allowed to those who may merge...
    expect((await gitCli(['push', '-q', 'origin', 'release/1.0'], dir)).ok).toBe(true);
    // ...but no one may push to it afterwards.
    await commitFile(dir, 'r.txt', 'r\n');
    const refused = await gitCli(['push', 'origin', 'release/1.0'], dir);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(
      'You are not allowed to push code to protected branches on this project.',
    );
  });

  it.each([
    ['a Reporter', AccessLevel.Reporter, 'You are not allowed to push code to this project.'],
    ['a Guest', AccessLevel.Guest, 'You are not allowed'],
  ])('refuses %s before anything is sent', async (_who, level, message) => {
    const { dir } = await memberClone(level).catch(async () => {
      // A Guest of a private project cannot even clone; push to an empty clone instead.
      const user = await server.factories.user();
      const setup = await clonedProject(user);
      await addProjectMember(setup.project.id, user, level);
      fs.mkdirSync(setup.dir);
      await gitCli(['init', '-q', '-b', 'main'], setup.dir);
      await gitCli(['remote', 'add', 'origin', setup.url], setup.dir);
      await commitFile(setup.dir, 'g.txt', 'g\n');
      return setup;
    });
    await gitCli(['checkout', '-q', '-B', 'topic'], dir);
    await commitFile(dir, 't.txt', 't\n');
    const refused = await gitCli(['push', 'origin', 'topic'], dir);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toMatch(/403|not allowed/);
    expect(refused.stderr + refused.stdout).toContain(message.slice(0, 11));
  });

  it('takes the first push into an empty repository, whose branch becomes the default when main was not pushed', async () => {
    const owner = await server.factories.user();
    const created = await server.request('POST', '/projects', {
      token: owner.token,
      json: { name: `empty-${++counter}` },
    });
    const project = created.body as Json & { id: number; path_with_namespace: string };
    const dir = path.join(work, `empty-${counter}`);
    const cloned = await gitCli(['clone', '-q', remote(project.path_with_namespace, owner.token), dir]);
    expect(cloned.ok, cloned.stderr).toBe(true);
    await gitCli(['checkout', '-q', '-b', 'trunk'], dir);
    await commitFile(dir, 'first.txt', 'first\n');
    const pushed = await gitCli(['push', '-q', 'origin', 'trunk'], dir);
    expect(pushed.ok, pushed.stderr).toBe(true);
    const shown = await server.request('GET', `/projects/${project.id}`, { token: owner.token });
    expect(shown.body).toMatchObject({ default_branch: 'trunk', empty_repo: false });
    expect(await gitText(['symbolic-ref', 'HEAD'], { gitDir: repositoryOf(project.id) })).toBe(
      'refs/heads/trunk',
    );
  });
});
