/** Protected branches: the rules' API, and `git push` and the branch API obeying what it configured. */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gitText } from '../../src/git/git.js';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { remoteUrl, useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const { work, gitCli } = useGitWorkDir('forge-protected-');

const { Guest, Reporter, Developer, Maintainer } = AccessLevel;
type Json = Record<string, unknown>;
let counter = 0;

/** A project with a README on main, and users in each role. */
async function setup() {
  const { owner, project } = await server.factories.ownedProjectWithReadme();
  const role = (level: number, attrs: { name?: string } = {}) =>
    server.factories.memberOf(project, level, attrs);
  return {
    owner,
    project,
    reporter: await role(Reporter),
    developer: await role(Developer, { name: 'Grace Hopper' }),
    maintainer: await role(Maintainer),
  };
}

const rulesPath = (project: Project, name?: string) =>
  `/projects/${project.id}/protected_branches${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;

/** An access-level entry as the API shows a role. */
const role = (level: number, description: string) => ({
  id: expect.any(Number),
  access_level: level,
  access_level_description: description,
  user_id: null,
  group_id: null,
});

describe('reading rules', () => {
  it("shows a new project's default protection of its default branch", async () => {
    const s = await setup();
    const list = await server.request('GET', rulesPath(s.project), { token: s.reporter.token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      {
        id: expect.any(Number),
        name: 'main',
        push_access_levels: [role(40, 'Maintainers')],
        merge_access_levels: [role(40, 'Maintainers')],
        unprotect_access_levels: [],
        allow_force_push: false,
        code_owner_approval_required: false,
      },
    ]);
    const one = await server.request('GET', rulesPath(s.project, 'main'), { token: s.reporter.token });
    expect(one.body).toEqual((list.body as Json[])[0]);
  });

  it('searches, paginates and finds wildcards by their encoded name', async () => {
    const s = await setup();
    for (const name of ['release/*', 'Release-2', '*-stable'])
      expect(
        (await server.request('POST', rulesPath(s.project), { token: s.maintainer.token, json: { name } }))
          .status,
      ).toBe(201);
    const found = await server.request('GET', `${rulesPath(s.project)}?search=RELEASE`, {
      token: s.reporter.token,
    });
    expect((found.body as Json[]).map((r) => r.name)).toEqual(['release/*', 'Release-2']);
    const page = await server.request('GET', `${rulesPath(s.project)}?per_page=3&page=2`, {
      token: s.reporter.token,
    });
    expect((page.body as Json[]).map((r) => r.name)).toEqual(['*-stable']);
    expect(page.headers.get('x-total')).toBe('4');
    expect(page.headers.get('x-prev-page')).toBe('1');
    expect(page.headers.get('link')).toContain('rel="first"');
    // python-gitlab encodes `*` as %2A, gitbeaker leaves it.
    const encoded = await server.request(
      'GET',
      `/projects/${s.project.id}/protected_branches/release%2F%2A`,
      {
        token: s.reporter.token,
      },
    );
    expect(encoded.body).toMatchObject({ name: 'release/*' });
    const star = await server.request('GET', `/projects/${s.project.id}/protected_branches/*-stable`, {
      token: s.reporter.token,
    });
    expect(star.body).toMatchObject({ name: '*-stable' });
    const missing = await server.request('GET', rulesPath(s.project, 'release/1'), {
      token: s.reporter.token,
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Not found' });
  });

  it.each([
    ['anonymous', 404],
    ['a Guest', 403],
  ])('hides the rules of a private project from %s (%i)', async (who, status) => {
    const s = await setup();
    let token: string | undefined;
    if (who === 'a Guest') {
      const guest = await server.factories.user();
      await server.factories.member(s.project, guest.user, Guest);
      token = guest.token;
    }
    expect((await server.request('GET', rulesPath(s.project), { token })).status).toBe(status);
    expect((await server.request('GET', rulesPath(s.project, 'main'), { token })).status).toBe(status);
  });

  it('shows the rules of a public project without a token', async () => {
    const owner = await server.factories.user();
    const project = await server.factories.project({
      owner,
      visibility: 'public',
      initialize_with_readme: true,
    });
    const list = await server.request('GET', rulesPath(project));
    expect(list.status).toBe(200);
    expect((list.body as Json[]).map((r) => r.name)).toEqual(['main']);
  });
});

describe('protecting', () => {
  // Refusals change nothing, so they share one project.
  let refusals: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    refusals = await setup();
  });

  it('defaults every action to Maintainers', async () => {
    const s = await setup();
    const created = await server.request('POST', rulesPath(s.project), {
      token: s.maintainer.token,
      json: { name: 'release/*' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'release/*',
      push_access_levels: [role(40, 'Maintainers')],
      merge_access_levels: [role(40, 'Maintainers')],
      unprotect_access_levels: [role(40, 'Maintainers')],
      allow_force_push: false,
      code_owner_approval_required: false,
    });
  });

  it('takes levels, users and groups, and names them', async () => {
    const s = await setup();
    const group = await server.factories.group({ path: `release-managers-${++counter}` });
    await server.factories.share(s.project, group, Developer);
    const created = await server.request('POST', rulesPath(s.project), {
      token: s.maintainer.token,
      json: {
        name: 'stable',
        push_access_level: 0,
        merge_access_level: 30,
        unprotect_access_level: 60,
        allow_force_push: true,
        code_owner_approval_required: true,
        allowed_to_push: [{ user_id: s.developer.user.id }, { group_id: group.id }],
        allowed_to_merge: [{ access_level: 40 }],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'stable',
      push_access_levels: [
        role(0, 'No one'),
        {
          access_level: null,
          access_level_description: 'Grace Hopper',
          user_id: s.developer.user.id,
          group_id: null,
        },
        { access_level: null, access_level_description: group.name, user_id: null, group_id: group.id },
      ],
      merge_access_levels: [role(30, 'Developers + Maintainers'), role(40, 'Maintainers')],
      unprotect_access_levels: [role(60, 'Administrators')],
      allow_force_push: true,
      code_owner_approval_required: true,
    });
    // A list given without its level gets no default level.
    const listOnly = await server.request('POST', rulesPath(s.project), {
      token: s.maintainer.token,
      json: { name: 'only-grace', allowed_to_push: [{ user_id: s.developer.user.id }] },
    });
    expect((listOnly.body as Json).push_access_levels).toEqual([
      {
        id: expect.any(Number),
        access_level: null,
        access_level_description: 'Grace Hopper',
        user_id: s.developer.user.id,
        group_id: null,
      },
    ]);
    expect((listOnly.body as Json).merge_access_levels).toEqual([role(40, 'Maintainers')]);
  });

  it("accepts gitbeaker's query string with bracket notation and an empty JSON body", async () => {
    const s = await setup();
    const query = new URLSearchParams([
      ['name', 'qs-*'],
      ['push_access_level', '30'],
      ['allowed_to_merge[][user_id]', String(s.developer.user.id)],
      ['allowed_to_unprotect[][access_level]', '40'],
      ['allow_force_push', 'true'],
    ]);
    const created = await server.request('POST', `${rulesPath(s.project)}?${query}`, {
      token: s.maintainer.token,
      json: {},
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'qs-*',
      push_access_levels: [role(30, 'Developers + Maintainers')],
      merge_access_levels: [{ user_id: s.developer.user.id }],
      unprotect_access_levels: [role(40, 'Maintainers')],
      allow_force_push: true,
    });
    const form = await server.request('POST', rulesPath(s.project), {
      token: s.maintainer.token,
      form: { name: 'form', merge_access_level: '0', 'allowed_to_push[][access_level]': '60' },
    });
    expect(form.body).toMatchObject({
      push_access_levels: [role(60, 'Administrators')],
      merge_access_levels: [role(0, 'No one')],
    });
  });

  it('answers 409 for a rule that exists', async () => {
    const s = await setup();
    const result = await server.request('POST', rulesPath(s.project), {
      token: s.owner.token,
      json: { name: 'main' },
    });
    expect(result.status).toBe(409);
    expect(result.body).toEqual({ message: "Protected branch 'main' already exists" });
  });

  it.each([
    [{}, 'name is missing'],
    [{ name: 'x', push_access_level: 20 }, 'push_access_level does not have a valid value'],
    [{ name: 'x', unprotect_access_level: 0 }, 'unprotect_access_level does not have a valid value'],
    [
      { name: 'x', allowed_to_unprotect: [{ access_level: 0 }] },
      'allowed_to_unprotect[0][access_level] does not have a valid value',
    ],
    [{ name: 'x', allowed_to_push: [{ user_id: 'me' }] }, 'allowed_to_push[0][user_id] is invalid'],
  ])('answers 400 for %j', async (json, error) => {
    const s = refusals;
    const result = await server.request('POST', rulesPath(s.project), { token: s.maintainer.token, json });
    expect(result.status).toBe(400);
    expect(result.body).toEqual({ error });
  });

  it('answers 422 with every validation message, creating nothing', async () => {
    const s = await setup();
    const outsider = await server.factories.user();
    const unshared = await server.factories.group();
    const reporterShare = await server.factories.group();
    await server.factories.share(s.project, reporterShare, Reporter);
    const cases: Array<[Json, string[]]> = [
      [{ name: '' }, ["Name can't be blank"]],
      [
        { name: 'x', allowed_to_push: [{ user_id: outsider.user.id }] },
        ['Push access levels user is not a member of the project'],
      ],
      [{ name: 'x', allowed_to_merge: [{ user_id: 999999 }] }, ["Merge access levels user can't be blank"]],
      [
        {
          name: 'x',
          allowed_to_push: [{ group_id: unshared.id }],
          allowed_to_unprotect: [{ group_id: reporterShare.id }],
        },
        [
          'Push access levels group does not have access to the project',
          'Unprotect access levels group does not have access to the project',
        ],
      ],
      [{ name: 'x', allowed_to_push: [{ group_id: 999999 }] }, ["Push access levels group can't be blank"]],
      [
        { name: 'x', allowed_to_push: [{ deploy_key_id: 1 }] },
        ["Push access levels deploy key can't be blank"],
      ],
      [{ name: 'x', allowed_to_push: [{}] }, ["Push access levels access level can't be blank"]],
      [
        { name: 'x', push_access_level: 30, allowed_to_push: [{ access_level: 30 }] },
        ['Push access levels access level has already been taken'],
      ],
      [
        { name: 'x', allowed_to_merge: [{ user_id: s.developer.user.id }, { user_id: s.developer.user.id }] },
        ['Merge access levels user has already been taken'],
      ],
    ];
    for (const [json, message] of cases) {
      const result = await server.request('POST', rulesPath(s.project), { token: s.maintainer.token, json });
      expect({ json, status: result.status, body: result.body }).toEqual({
        json,
        status: 422,
        body: { message },
      });
    }
    const list = await server.request('GET', rulesPath(s.project), { token: s.maintainer.token });
    expect((list.body as Json[]).map((r) => r.name)).toEqual(['main']);
  });

  it('accepts a member inherited from the group and a user of a shared group', async () => {
    const group = await server.factories.group();
    const owner = await server.factories.user();
    await server.factories.member(group, owner.user, AccessLevel.Owner);
    const project = await server.factories.project({ owner, namespace: group, initialize_with_readme: true });
    const inherited = await server.factories.user();
    await server.factories.member(group, inherited.user, Developer);
    const shared = await server.factories.group();
    const viaShare = await server.factories.user();
    await server.factories.member(shared, viaShare.user, Developer);
    await server.factories.share(project, shared, Maintainer);
    const created = await server.request('POST', rulesPath(project), {
      token: owner.token,
      json: { name: 'x', allowed_to_push: [{ user_id: inherited.user.id }, { user_id: viaShare.user.id }] },
    });
    expect(created.status).toBe(201);
  });

  it.each([
    ['a Developer', 'developer', 403],
    ['a Reporter', 'reporter', 403],
  ] as const)('refuses %s', async (_who, key, status) => {
    const s = refusals;
    const result = await server.request('POST', rulesPath(s.project), {
      token: s[key].token,
      json: { name: 'x' },
    });
    expect(result.status).toBe(status);
    expect(result.body).toEqual({ message: '403 Forbidden' });
  });
});

describe('updating and unprotecting', () => {
  async function withRule(s: Awaited<ReturnType<typeof setup>>, json: Json) {
    const created = await server.request('POST', rulesPath(s.project), { token: s.maintainer.token, json });
    expect(created.status).toBe(201);
    return created.body as Json & {
      push_access_levels: Json[];
      merge_access_levels: Json[];
      unprotect_access_levels: Json[];
    };
  }

  it.each(['PATCH', 'PUT'])('%s adds, changes and removes entries, and sets flags', async (method) => {
    const s = await setup();
    const rule = await withRule(s, { name: 'rel/*', push_access_level: 40, merge_access_level: 40 });
    const [pushEntry] = rule.push_access_levels;
    const [mergeEntry] = rule.merge_access_levels;
    const updated = await server.request(method, rulesPath(s.project, 'rel/*'), {
      token: s.maintainer.token,
      json: {
        allow_force_push: true,
        allowed_to_push: [{ id: pushEntry.id, _destroy: true }, { user_id: s.developer.user.id }],
        allowed_to_merge: [{ id: mergeEntry.id, access_level: 30 }],
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: rule.id,
      name: 'rel/*',
      push_access_levels: [
        { access_level: null, user_id: s.developer.user.id, access_level_description: 'Grace Hopper' },
      ],
      merge_access_levels: [
        { id: mergeEntry.id, access_level: 30, access_level_description: 'Developers + Maintainers' },
      ],
      unprotect_access_levels: rule.unprotect_access_levels,
      allow_force_push: true,
      code_owner_approval_required: false,
    });
    const unchanged = await server.request(method, rulesPath(s.project, 'rel/*'), {
      token: s.maintainer.token,
      json: {},
    });
    expect(unchanged.body).toEqual(updated.body);
  });

  it('answers 404 for an unknown rule or entry, and 422 for a duplicate', async () => {
    const s = await setup();
    const rule = await withRule(s, { name: 'dev' });
    const missing = await server.request('PATCH', rulesPath(s.project, 'nope'), {
      token: s.maintainer.token,
      json: {},
    });
    expect(missing.status).toBe(404);
    const foreignId = rule.merge_access_levels[0].id;
    const wrongList = await server.request('PATCH', rulesPath(s.project, 'dev'), {
      token: s.maintainer.token,
      json: { allowed_to_push: [{ id: foreignId, _destroy: true }] },
    });
    expect(wrongList.status).toBe(404);
    expect(wrongList.body).toEqual({ message: '404 Not found' });
    const duplicate = await server.request('PATCH', rulesPath(s.project, 'dev'), {
      token: s.maintainer.token,
      json: { allowed_to_push: [{ access_level: 40 }] },
    });
    expect(duplicate.status).toBe(422);
    expect(duplicate.body).toEqual({ message: ['Push access levels access level has already been taken'] });
  });

  it('unprotects with 204, after which the rule is gone', async () => {
    const s = await setup();
    await withRule(s, { name: 'gone' });
    const refused = await server.request('DELETE', rulesPath(s.project, 'gone'), {
      token: s.developer.token,
    });
    expect(refused.status).toBe(403);
    const deleted = await server.request('DELETE', rulesPath(s.project, 'gone'), {
      token: s.maintainer.token,
    });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(
      (await server.request('GET', rulesPath(s.project, 'gone'), { token: s.maintainer.token })).status,
    ).toBe(404);
    expect(
      (await server.request('DELETE', rulesPath(s.project, 'gone'), { token: s.maintainer.token })).status,
    ).toBe(404);
  });

  it('lets only those in the unprotect list change or remove the rule', async () => {
    const s = await setup();
    const admin = await server.factories.user({ admin: true });
    await withRule(s, { name: 'locked', unprotect_access_level: 60 });
    const patch = await server.request('PATCH', rulesPath(s.project, 'locked'), {
      token: s.maintainer.token,
      json: { allow_force_push: true },
    });
    expect(patch.status).toBe(403);
    const remove = await server.request('DELETE', rulesPath(s.project, 'locked'), { token: s.owner.token });
    expect(remove.status).toBe(403);
    const byAdmin = await server.request('DELETE', rulesPath(s.project, 'locked'), { token: admin.token });
    expect(byAdmin.status).toBe(204);
  });
});

describe('what git push and the branch API enforce', () => {
  let s: Awaited<ReturnType<typeof setup>>;
  const clones: Record<string, string> = {};
  const fullPath = () => `${s.owner.user.username}/${s.project.path}`;
  const repository = () => server.services.storage.diskPath('default', s.project.id);

  /** In `who`'s clone, a new commit on the server's `branch` (or on main), pushed there. */
  async function commitAs(who: 'maintainer' | 'developer', branch: string) {
    const dir = clones[who];
    await gitCli(['fetch', '-q', 'origin'], dir);
    const exists = (await gitCli(['rev-parse', '--verify', '-q', `origin/${branch}`], dir)).ok;
    await gitCli(['checkout', '-q', '-B', branch, exists ? `origin/${branch}` : 'origin/main'], dir);
    fs.writeFileSync(path.join(dir, `${who}-${++counter}.txt`), 'x\n');
    await gitCli(['add', '.'], dir);
    await gitCli(['commit', '-q', '-m', `change ${counter}`], dir);
    return gitCli(['push', 'origin', `HEAD:refs/heads/${branch}`], dir);
  }

  beforeAll(async () => {
    s = await setup();
    for (const who of ['maintainer', 'developer'] as const) {
      const url = remoteUrl(server.url, fullPath(), (s[who] as TestUser).token);
      clones[who] = path.join(work, `clone-${who}-${++counter}`);
      const cloned = await gitCli(['clone', '-q', url, clones[who]]);
      expect(cloned.ok, cloned.stderr).toBe(true);
    }
  });

  it('refuses a Maintainer push once the API set push_access_level 0, and allows it again after unprotecting', async () => {
    expect(
      (await server.request('DELETE', rulesPath(s.project, 'main'), { token: s.maintainer.token })).status,
    ).toBe(204);
    const created = await server.request('POST', rulesPath(s.project), {
      token: s.maintainer.token,
      json: { name: 'main', push_access_level: 0 },
    });
    expect(created.status).toBe(201);
    const before = await gitText(['rev-parse', 'main'], { gitDir: repository() });
    const refused = await commitAs('maintainer', 'main');
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(
      'remote: GitLab: You are not allowed to push code to protected branches on this project.',
    );
    expect(await gitText(['rev-parse', 'main'], { gitDir: repository() })).toBe(before);
    const branch = await server.request('GET', `/projects/${s.project.id}/repository/branches/main`, {
      token: s.maintainer.token,
    });
    expect(branch.body).toMatchObject({ protected: true, can_push: false });

    expect(
      (await server.request('DELETE', rulesPath(s.project, 'main'), { token: s.maintainer.token })).status,
    ).toBe(204);
    const allowed = await gitCli(['push', 'origin', 'HEAD:refs/heads/main'], clones.maintainer);
    expect(allowed.ok, allowed.stderr).toBe(true);
  });

  it('lets a Developer named in allowed_to_push push where the role alone would not', async () => {
    const created = await server.request('POST', rulesPath(s.project), {
      token: s.maintainer.token,
      json: { name: 'team/*', push_access_level: 40, merge_access_level: 40 },
    });
    expect(created.status).toBe(201);
    await server.request('POST', `/projects/${s.project.id}/repository/branches`, {
      token: s.maintainer.token,
      json: { branch: 'team/one', ref: 'main' },
    });
    const refused = await commitAs('developer', 'team/one');
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(
      'You are not allowed to push code to protected branches on this project.',
    );

    const updated = await server.request('PATCH', rulesPath(s.project, 'team/*'), {
      token: s.maintainer.token,
      json: { allowed_to_push: [{ user_id: s.developer.user.id }] },
    });
    expect(updated.status).toBe(200);
    const allowed = await gitCli(['push', 'origin', 'HEAD:refs/heads/team/one'], clones.developer);
    expect(allowed.ok, allowed.stderr).toBe(true);
    const branch = await server.request('GET', `/projects/${s.project.id}/repository/branches/team%2Fone`, {
      token: s.developer.token,
    });
    expect(branch.body).toMatchObject({ protected: true, can_push: true, developers_can_push: false });
  });

  it('applies a wildcard to branches created later, by push and through the API', async () => {
    const created = await server.request('POST', rulesPath(s.project), {
      token: s.maintainer.token,
      json: { name: 'frozen-*', push_access_level: 0, merge_access_level: 0 },
    });
    expect(created.status).toBe(201);
    const pushed = await commitAs('maintainer', 'frozen-1');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain('You are not allowed to create protected branches on this project.');
    const api = await server.request('POST', `/projects/${s.project.id}/repository/branches`, {
      token: s.maintainer.token,
      json: { branch: 'frozen-2', ref: 'main' },
    });
    expect(api.status).toBe(400);
    expect(api.body).toEqual({
      message: 'You are not allowed to create protected branches on this project.',
    });
  });

  it('lets force pushes through only with allow_force_push', async () => {
    const created = await server.request('POST', rulesPath(s.project), {
      token: s.maintainer.token,
      json: { name: 'force-me', push_access_level: 40 },
    });
    expect(created.status).toBe(201);
    expect((await commitAs('maintainer', 'force-me')).ok).toBe(true);
    const rewritten = await commitAs('maintainer', 'force-me-2');
    expect(rewritten.ok).toBe(true);
    const forced = await gitCli(['push', '--force', 'origin', 'HEAD:refs/heads/force-me'], clones.maintainer);
    expect(forced.ok).toBe(false);
    expect(forced.stderr).toContain(
      'You are not allowed to force push code to a protected branch on this project.',
    );
    await server.request('PATCH', rulesPath(s.project, 'force-me'), {
      token: s.maintainer.token,
      json: { allow_force_push: true },
    });
    const allowed = await gitCli(
      ['push', '--force', 'origin', 'HEAD:refs/heads/force-me'],
      clones.maintainer,
    );
    expect(allowed.ok, allowed.stderr).toBe(true);
  });
});
