/**
 * Forks: creation through the API with shared objects, the fork relation, the list of forks, and what
 * happens to a fork's repository when its source goes (it keeps working).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { RepositoryStorage } from '../../src/git/storage.js';
import type { TestUser } from '../helpers/factories.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const { work, gitCli } = useGitWorkDir('forge-forks-');

type Json = Record<string, unknown> & { id: number; path_with_namespace: string };
let counter = 0;

/** A project with a README on main (and a tag), owned by a new user. */
async function sourceProject(attrs: Record<string, unknown> = {}) {
  const owner = await server.factories.user();
  const created = await server.request('POST', '/projects', {
    token: owner.token,
    json: { name: `source-${++counter}`, initialize_with_readme: true, visibility: 'public', ...attrs },
  });
  expect(created.status).toBe(201);
  const project = created.body as Json;
  const tag = await server.request('POST', `/projects/${project.id}/repository/tags`, {
    token: owner.token,
    json: { tag_name: 'v1.0', ref: 'main' },
  });
  expect(tag.status).toBe(201);
  return { owner, project };
}

async function fork(id: number, user: TestUser, json: Record<string, unknown> = {}) {
  return server.request('POST', `/projects/${id}/fork`, { token: user.token, json });
}

const repoDir = (id: number) => server.services.storage.diskPath('default', id);
const alternates = (id: number) => path.join(repoDir(id), 'objects', 'info', 'alternates');

/** Waits for the background jobs that a change enqueued. */
async function until(check: () => boolean | Promise<boolean>, ms = 20_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('POST /projects/:id/fork', () => {
  it('creates a fork in the caller namespace that borrows the source objects', async () => {
    const { project } = await sourceProject();
    const forker = await server.factories.user();
    const response = await fork(project.id, forker, { mr_default_target_self: true });
    expect(response.status).toBe(201);
    const created = response.body as Json;
    expect(created).toMatchObject({
      path: project.path,
      path_with_namespace: `${forker.user.username}/${project.path}`,
      import_status: 'finished',
      mr_default_target_self: true,
      empty_repo: false,
      default_branch: 'main',
      forked_from_project: { id: project.id, forks_count: 1 },
    });
    // The objects stay where they were: the fork names the source's object directory.
    const borrowed = fs.readFileSync(alternates(created.id), 'utf8').trim();
    expect(path.resolve(repoDir(created.id), 'objects', borrowed)).toBe(
      path.join(repoDir(project.id), 'objects'),
    );
    expect(fs.readdirSync(path.join(repoDir(created.id), 'objects', 'pack'))).toEqual([]);

    const tags = await server.request('GET', `/projects/${created.id}/repository/tags`, {
      token: forker.token,
    });
    expect((tags.body as Json[]).map((tag) => tag.name)).toEqual(['v1.0']);
    const source = await server.request('GET', `/projects/${project.id}`, { token: forker.token });
    expect(source.body).toMatchObject({ forks_count: 1 });
    expect(source.body).not.toHaveProperty('forked_from_project');
    expect(source.body).not.toHaveProperty('mr_default_target_self');
    const again = await server.request('GET', `/projects/${created.id}`, { token: forker.token });
    expect(again.body).toMatchObject({ import_status: 'finished', forked_from_project: { id: project.id } });
    const updated = await server.request('PUT', `/projects/${created.id}`, {
      token: forker.token,
      json: { mr_default_target_self: false },
    });
    expect(updated.body).toMatchObject({
      mr_default_target_self: false,
      forked_from_project: { id: project.id },
    });
  });

  it('names, places and limits the fork as asked', async () => {
    const { project } = await sourceProject({ visibility: 'internal' });
    const forker = await server.factories.user();
    const group = await server.factories.group({ visibility: 'public' });
    await server.factories.member(group, forker.user, AccessLevel.Developer);
    const response = await fork(project.id, forker, {
      namespace_path: group.fullPath,
      name: 'Renamed fork',
      path: 'renamed-fork',
      description: 'mine',
      visibility: 'public',
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      name: 'Renamed fork',
      path_with_namespace: `${group.fullPath}/renamed-fork`,
      description: 'mine',
      // Never more visible than the source.
      visibility: 'internal',
      mr_default_target_self: false,
    });
    const byId = await fork(project.id, forker, { namespace_id: group.id, path: 'second', name: 'Second' });
    expect(byId.status).toBe(201);
  });

  it('forks an empty repository', async () => {
    const owner = await server.factories.user();
    const created = await server.request('POST', '/projects', {
      token: owner.token,
      json: { name: `empty-${++counter}`, visibility: 'public', default_branch: 'trunk' },
    });
    const forker = await server.factories.user();
    const response = await fork((created.body as Json).id, forker);
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ empty_repo: true, default_branch: 'trunk' });
    const branchless = await fork((created.body as Json).id, forker, {
      branches: 'trunk',
      path: 'x',
      name: 'x',
    });
    expect(branchless.body).toEqual({ message: '404 Source Branch Not Found' });
  });

  it('forks one branch when asked', async () => {
    const { owner, project } = await sourceProject();
    await server.request('POST', `/projects/${project.id}/repository/branches`, {
      token: owner.token,
      json: { branch: 'feature', ref: 'main' },
    });
    const forker = await server.factories.user();
    const response = await fork(project.id, forker, { branches: 'feature' });
    expect(response.status).toBe(201);
    const created = response.body as Json;
    expect(created.default_branch).toBe('feature');
    const branches = await server.request('GET', `/projects/${created.id}/repository/branches`, {
      token: forker.token,
    });
    expect((branches.body as Json[]).map((branch) => branch.name)).toEqual(['feature']);
    const missing = await fork(project.id, forker, { branches: 'nope', path: 'other', name: 'other' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Source Branch Not Found' });
  });

  it.each([
    [
      'a taken path',
      {},
      409,
      { message: { name: ['has already been taken'], path: ['has already been taken'] } },
    ],
    ['an invalid path', { path: '-bad' }, 409, undefined],
    [
      'an unknown namespace',
      { namespace_id: 2147483647 },
      404,
      { message: '404 Target Namespace Not Found' },
    ],
    [
      'a namespace path nobody has',
      { namespace_path: 'no/such/group' },
      404,
      { message: '404 Target Namespace Not Found' },
    ],
    ['a visibility that does not exist', { visibility: 'secret' }, 400, undefined],
  ])('refuses %s', async (_, json, status, body) => {
    const { project } = await sourceProject();
    const forker = await server.factories.user();
    expect((await fork(project.id, forker)).status).toBe(201);
    const response = await fork(project.id, forker, json);
    expect(response.status).toBe(status);
    if (body) expect(response.body).toEqual(body);
  });

  it('gives one of two simultaneous forks to the same path its place, the other 409', async () => {
    const { project } = await sourceProject();
    const forker = await server.factories.user();
    const answers = await Promise.all([fork(project.id, forker), fork(project.id, forker)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect((await server.request('GET', `/projects/${project.id}`)).body).toMatchObject({ forks_count: 1 });
  });

  it('refuses namespaces the caller cannot create projects in', async () => {
    const { project } = await sourceProject();
    const forker = await server.factories.user();
    const other = await server.factories.user();
    const group = await server.factories.group({ visibility: 'public' });
    await server.factories.member(group, forker.user, AccessLevel.Reporter);
    for (const json of [{ namespace_path: other.user.username }, { namespace_id: group.id }]) {
      const response = await fork(project.id, forker, json);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: '404 Target Namespace Not Found' });
    }
    const external = await server.factories.user({ external: true });
    expect((await fork(project.id, external)).body).toEqual({ message: '404 Target Namespace Not Found' });
  });

  it('follows forking_access_level and the code read permission', async () => {
    const { owner, project } = await sourceProject({ visibility: 'private' });
    const guest = await server.factories.user();
    const reporter = await server.factories.user();
    const source = { id: project.id, namespaceId: 0 } as never;
    await server.factories.member(source, guest.user, AccessLevel.Guest);
    await server.factories.member(source, reporter.user, AccessLevel.Reporter);
    expect((await fork(project.id, guest)).body).toEqual({ message: '404 Not Found' });
    const outsider = await server.factories.user();
    expect((await fork(project.id, outsider)).body).toEqual({ message: '404 Project Not Found' });

    for (const [level, allowed] of [
      ['disabled', false],
      ['private', true],
      ['enabled', true],
    ] as const) {
      const update = await server.request('PUT', `/projects/${project.id}`, {
        token: owner.token,
        json: { forking_access_level: level },
      });
      expect(update.body).toMatchObject({ forking_access_level: level });
      const response = await fork(project.id, reporter, { path: `fork-${level}`, name: `fork ${level}` });
      expect(response.status, level).toBe(allowed ? 201 : 404);
    }
  });

  it('hides forked_from_project from callers who cannot see the source', async () => {
    const { owner, project } = await sourceProject();
    const forker = await server.factories.user();
    const created = (await fork(project.id, forker, { visibility: 'public' })).body as Json;
    await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: { visibility: 'private' },
    });
    const seen = await server.request('GET', `/projects/${created.id}`);
    expect(seen.status).toBe(200);
    expect(seen.body).not.toHaveProperty('forked_from_project');
  });
});

describe('the fork relation', () => {
  it('lists forks with filters and pagination', async () => {
    const { project } = await sourceProject();
    const forkers = await Promise.all([1, 2, 3].map(() => server.factories.user()));
    const ids: number[] = [];
    for (const [i, forker] of forkers.entries()) {
      const response = await fork(project.id, forker, { visibility: i === 2 ? 'private' : 'public' });
      ids.push((response.body as Json).id);
    }
    // A fork of a fork is listed under its own source.
    await fork(ids[0], forkers[1], { path: 'nested', name: 'nested' });
    const anonymous = await server.request('GET', `/projects/${project.id}/forks?order_by=id&sort=asc`);
    expect((anonymous.body as Json[]).map((p) => p.id)).toEqual(ids.slice(0, 2));
    const mine = await server.request('GET', `/projects/${project.id}/forks?owned=true`, {
      token: forkers[2].token,
    });
    expect((mine.body as Json[]).map((p) => p.id)).toEqual([ids[2]]);
    const admin = await server.factories.user({ admin: true });
    const page = await server.request(
      'GET',
      `/projects/${project.id}/forks?per_page=2&order_by=id&sort=desc`,
      {
        token: admin.token,
      },
    );
    expect(page.headers.get('x-total')).toBe('3');
    expect((page.body as Json[]).map((p) => p.id)).toEqual([ids[2], ids[1]]);
    expect((page.body as Json[])[0]).toMatchObject({ forked_from_project: { id: project.id } });
    const searched = await server.request(
      'GET',
      `/projects/${project.id}/forks?search=${forkers[1].user.username}&simple=true`,
      { token: admin.token },
    );
    expect(searched.status).toBe(200);
    const source = await server.request('GET', `/projects/${project.id}`);
    expect(source.body).toMatchObject({ forks_count: 3 });
  });

  it('removes and creates the relation', async () => {
    const { project } = await sourceProject();
    const forker = await server.factories.user();
    const created = (await fork(project.id, forker)).body as Json;
    const admin = await server.factories.user({ admin: true });

    expect(
      (await server.request('POST', `/projects/${created.id}/fork/${project.id}`, { token: admin.token }))
        .body,
    ).toEqual({ message: 'Project already forked' });
    const removed = await server.request('DELETE', `/projects/${created.id}/fork`, { token: forker.token });
    expect(removed.status).toBe(204);
    const again = await server.request('DELETE', `/projects/${created.id}/fork`, { token: forker.token });
    expect(again.status).toBe(304);
    const plain = await server.request('GET', `/projects/${created.id}`, { token: forker.token });
    expect(plain.body).not.toHaveProperty('forked_from_project');
    expect((await server.request('GET', `/projects/${project.id}`)).body).toMatchObject({ forks_count: 0 });
    // The repository gets its own objects in the background.
    await until(() => !fs.existsSync(alternates(created.id)));

    const notAdmin = await server.request('POST', `/projects/${created.id}/fork/${project.id}`, {
      token: forker.token,
    });
    expect(notAdmin.status).toBe(403);
    const missing = await server.request('POST', `/projects/${created.id}/fork/2147483647`, {
      token: admin.token,
    });
    expect(missing.body).toEqual({ message: '404 Source Project Not Found' });
    const linked = await server.request('POST', `/projects/${created.id}/fork/${project.id}`, {
      token: admin.token,
    });
    expect(linked.status).toBe(201);
    expect(linked.body).toMatchObject({ forked_from_project: { id: project.id, forks_count: 1 } });
  });
});

describe('fork repositories', () => {
  it('clones a fork, keeps pushes to it out of the source, and survives the source deletion', async () => {
    const { owner, project } = await sourceProject();
    const forker = await server.factories.user();
    const created = (await fork(project.id, forker)).body as Json;
    // A fork of the fork borrows from the root too.
    const nested = (await fork(created.id, owner, { path: 'nested-fork', name: 'nested fork' })).body as Json;
    expect(fs.readFileSync(alternates(nested.id), 'utf8')).toBe(
      fs.readFileSync(alternates(created.id), 'utf8'),
    );

    const dir = path.join(work, `fork-${created.id}`);
    const clone = await gitCli([
      'clone',
      '-q',
      remoteUrl(server.url, created.path_with_namespace, forker.token),
      dir,
    ]);
    expect(clone.ok, clone.stderr).toBe(true);
    fs.writeFileSync(path.join(dir, 'fork.txt'), 'only in the fork\n');
    await gitCli(['add', 'fork.txt'], dir);
    await gitCli(['commit', '-q', '-m', 'fork change'], dir);
    const push = await gitCli(['push', '-q', 'origin', 'HEAD:refs/heads/fork-work'], dir);
    expect(push.ok, push.stderr).toBe(true);
    const sourceBranches = await server.request('GET', `/projects/${project.id}/repository/branches`);
    expect((sourceBranches.body as Json[]).map((b) => b.name)).toEqual(['main']);

    const deleted = await server.request('DELETE', `/projects/${project.id}`, { token: owner.token });
    expect(deleted.status).toBe(202);
    await until(() => !fs.existsSync(repoDir(project.id)));
    expect(fs.existsSync(alternates(created.id))).toBe(false);
    expect(fs.existsSync(alternates(nested.id))).toBe(false);
    for (const [fullPath, name] of [
      [created.path_with_namespace, 'after-fork'],
      [nested.path_with_namespace, 'after-nested'],
    ]) {
      const again = await gitCli([
        'clone',
        '-q',
        remoteUrl(server.url, fullPath, owner.token),
        path.join(work, name),
      ]);
      expect(again.ok, again.stderr).toBe(true);
      const fsck = await gitCli(['fsck', '--no-progress'], path.join(work, name));
      expect(fsck.ok, fsck.stderr).toBe(true);
    }
    const view = await server.request('GET', `/projects/${created.id}`, { token: forker.token });
    expect(view.body).not.toHaveProperty('forked_from_project');
    expect(view.body).not.toHaveProperty('mr_default_target_self');
  });

  it('keeps what forks borrow through the source housekeeping', async () => {
    const { owner, project } = await sourceProject();
    const made = await server.request('POST', `/projects/${project.id}/repository/commits`, {
      token: owner.token,
      json: {
        branch: 'feature',
        start_branch: 'main',
        commit_message: 'only on feature',
        actions: [{ action: 'create', file_path: 'feature.txt', content: 'feature' }],
      },
    });
    const sha = (made.body as { id: string }).id;
    await server.services.repositories.housekeep(project.id, 'eager');
    const forker = await server.factories.user();
    const created = (await fork(project.id, forker)).body as Json;
    // The source forgets the commit; its housekeeping must not drop it, the fork still needs it.
    await server.request('DELETE', `/projects/${project.id}/repository/branches/feature`, {
      token: owner.token,
    });
    await server.services.repositories.housekeep(project.id, 'prune');
    await server.services.repositories.housekeep(created.id, 'eager');
    const commit = await server.request('GET', `/projects/${created.id}/repository/commits/${sha}`, {
      token: forker.token,
    });
    expect(commit.status).toBe(200);
    // The fork's own housekeeping packs only its own objects: the borrowed ones stay borrowed.
    expect(fs.existsSync(alternates(created.id))).toBe(true);
    const dir = path.join(work, `housekept-${created.id}`);
    const clone = await gitCli([
      'clone',
      '-q',
      remoteUrl(server.url, created.path_with_namespace, forker.token),
      dir,
    ]);
    expect(clone.ok, clone.stderr).toBe(true);
    expect((await gitCli(['cat-file', '-t', sha], dir)).stdout.trim()).toBe('commit');
  });

  it('keeps forks outside a deleted group working', async () => {
    const admin = await server.factories.user({ admin: true });
    const group = await server.factories.group({ visibility: 'public' });
    const created = await server.request('POST', '/projects', {
      token: admin.token,
      json: {
        path: `in-group-${++counter}`,
        namespace_id: group.id,
        initialize_with_readme: true,
        visibility: 'public',
      },
    });
    const source = created.body as Json;
    const forker = await server.factories.user();
    const forked = (await fork(source.id, forker)).body as Json;
    const removed = await server.request('DELETE', `/groups/${group.id}`, { token: admin.token });
    expect(removed.status).toBe(202);
    await until(() => !fs.existsSync(repoDir(source.id)));
    expect(fs.existsSync(alternates(forked.id))).toBe(false);
    const clone = await gitCli([
      'clone',
      '-q',
      remoteUrl(server.url, forked.path_with_namespace, forker.token),
      path.join(work, `group-gone-${forked.id}`),
    ]);
    expect(clone.ok, clone.stderr).toBe(true);
  });

  it('leaves a deleted source in place for the recovery while a fork still borrows from it', async () => {
    const { project } = await sourceProject();
    const forker = await server.factories.user();
    const created = (await fork(project.id, forker)).body as Json;
    // As if the deletion committed and the process died before its job ran.
    await server.dataSource.query(
      'UPDATE projects SET forked_from_project_id = NULL, borrows_objects_from_id = NULL WHERE id = $1',
      [created.id],
    );
    await server.dataSource.query('DELETE FROM projects WHERE id = $1', [project.id]);
    const report = await server.services.storageRecovery.recover({ staleBefore: new Date(0) });
    expect(report.lent).toBeGreaterThanOrEqual(1);
    expect(fs.existsSync(repoDir(project.id))).toBe(true);
    await server.services.repositories.dissociate('default', created.id, project.id);
    await server.services.storageRecovery.recover({ staleBefore: new Date(0) });
    expect(fs.existsSync(repoDir(project.id))).toBe(false);
    expect(RepositoryStorage.hash(created.id)).toBeTruthy();
    const clone = await gitCli([
      'clone',
      '-q',
      remoteUrl(server.url, created.path_with_namespace, forker.token),
      path.join(work, `orphaned-${created.id}`),
    ]);
    expect(clone.ok, clone.stderr).toBe(true);
  });
});
