import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { VisibilityName } from '../../src/core/abilities.js';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { send, useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;
const ids = (body: unknown) => (body as Json[]).map((item) => item.id);
const tag = () => Math.random().toString(36).slice(2, 8);
const encoded = (path: string) => encodeURIComponent(path);

/** Creates a group through the API as `owner`, returning the response body. */
async function createGroup(owner: TestUser, attrs: Json): Promise<Json> {
  const response = await server.request('POST', '/groups', { token: owner.token, json: attrs });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as Json;
}

describe('nesting', () => {
  it('creates three levels with full paths and names, found by id or encoded path', async () => {
    const alice = await server.factories.user();
    const t = tag();
    const top = await createGroup(alice, { name: `Top ${t}`, path: `top-${t}`, visibility: 'public' });
    const middle = await createGroup(alice, { name: 'Middle', path: 'middle', parent_id: top.id });
    const bottom = await createGroup(alice, { name: 'Bottom', path: 'bottom', parent_id: middle.id });
    expect(bottom).toMatchObject({
      name: 'Bottom',
      path: 'bottom',
      full_path: `top-${t}/middle/bottom`,
      full_name: `Top ${t} / Middle / Bottom`,
      parent_id: middle.id,
      visibility: 'private',
      web_url: `${server.url}/groups/top-${t}/middle/bottom`,
      shared_with_groups: [],
    });
    expect(bottom).not.toHaveProperty('projects');
    expect(bottom).not.toHaveProperty('prevent_sharing_groups_outside_hierarchy');
    expect(top).toHaveProperty('prevent_sharing_groups_outside_hierarchy', false);

    const byPath = await server.request('GET', `/groups/${encoded(`top-${t}/middle/bottom`)}`, {
      token: alice.token,
    });
    expect(byPath.status).toBe(200);
    expect(byPath.body).toMatchObject({ id: bottom.id, projects: [], shared_projects: [] });
    const upper = await server.request('GET', `/groups/${encoded(`TOP-${t}/Middle`)}`, {
      token: alice.token,
    });
    expect((upper.body as Json).id).toBe(middle.id);
    const byId = await server.request('GET', `/groups/${top.id}`, { token: alice.token });
    expect((byId.body as Json).full_path).toBe(`top-${t}`);
    const missing = await server.request('GET', `/groups/${encoded(`top-${t}/nothing`)}`, {
      token: alice.token,
    });
    expect(missing).toMatchObject({ status: 404, body: { message: '404 Group Not Found' } });
  });

  it('makes the creator a direct Owner of each new group', async () => {
    const alice = await server.factories.user();
    const group = await createGroup(alice, { name: 'Owned', path: `owned-${tag()}` });
    const rows: Json[] = await server.dataSource.query(
      `SELECT access_level, created_by_id FROM members WHERE source_type = 'Namespace' AND source_id = $1`,
      [group.id],
    );
    expect(rows).toEqual([{ access_level: 50, created_by_id: alice.user.id }]);
    const owned = await server.request('GET', '/groups?owned=true', { token: alice.token });
    expect(ids(owned.body)).toEqual([group.id]);
  });
});

describe('who sees a group', () => {
  type Role = 'anonymous' | 'outsider' | 'external' | 'subgroupMember' | 'projectMember' | 'admin';

  /** A top-level group with a private subgroup holding a private project, and a caller in `role`. */
  async function scenario(visibility: VisibilityName, role: Role) {
    const top = await server.factories.group({ visibility });
    const sub = await server.factories.group({ parent: top, visibility: 'private' });
    const project = await server.factories.project({ namespace: sub, visibility: 'private' });
    let caller: TestUser | undefined;
    if (role === 'subgroupMember') caller = await server.factories.memberOf(sub, AccessLevel.Guest);
    else if (role === 'projectMember')
      caller = await server.factories.memberOf(project, AccessLevel.Reporter);
    else caller = await server.factories.caller(role);
    return { top, sub, token: caller?.token };
  }

  const cases: Array<[Role, VisibilityName, boolean]> = [
    ['anonymous', 'public', true],
    ['anonymous', 'internal', false],
    ['anonymous', 'private', false],
    ['outsider', 'public', true],
    ['outsider', 'internal', true],
    ['outsider', 'private', false],
    ['external', 'public', true],
    ['external', 'internal', false],
    ['external', 'private', false],
    ['subgroupMember', 'private', true],
    ['projectMember', 'private', true],
    ['admin', 'private', true],
  ];

  it.each(cases)('%s, %s group: visible=%s', async (role, visibility, visible) => {
    const { top, token } = await scenario(visibility, role);
    const single = await server.request('GET', `/groups/${top.id}`, { token });
    expect(single.status).toBe(visible ? 200 : 404);
    if (!visible) expect(single.body).toEqual({ message: '404 Group Not Found' });
    const byPath = await server.request('GET', `/groups/${encoded(top.fullPath)}`, { token });
    expect(byPath.status).toBe(visible ? 200 : 404);
    const list = await server.request(
      'GET',
      `/groups?all_available=true&top_level_only=true&search=${top.path}`,
      {
        token,
      },
    );
    expect(list.status).toBe(200);
    expect(ids(list.body)).toEqual(visible ? [top.id] : []);
  });

  it('lets members of a private group see its subgroups', async () => {
    const top = await server.factories.group();
    const sub = await server.factories.group({ parent: top });
    const bob = await server.factories.user();
    await server.factories.member(top, bob.user, AccessLevel.Guest);
    expect((await server.request('GET', `/groups/${sub.id}`, { token: bob.token })).status).toBe(200);
  });

  it('hides groups reached only through an expired membership', async () => {
    const top = await server.factories.group();
    const bob = await server.factories.user();
    await server.factories.member(top, bob.user, AccessLevel.Owner, '2020-01-01');
    expect((await server.request('GET', `/groups/${top.id}`, { token: bob.token })).status).toBe(404);
  });
});

describe('listing groups', () => {
  /** Alice belongs to `mine` (Developer) and owns `owned`; `other` is public, `hidden` private. */
  async function world() {
    const t = tag();
    const alice = await server.factories.user();
    const make = (path: string, visibility: VisibilityName, parent?: Namespace) =>
      server.factories.group({ path: `${t}-${path}`, visibility, parent });
    const mine = await make('mine', 'internal');
    const child = await make('mine-child', 'private', mine);
    const owned = await make('owned', 'private');
    const other = await make('other', 'public');
    const hidden = await make('hidden', 'private');
    await server.factories.member(mine, alice.user, AccessLevel.Developer);
    await server.factories.member(owned, alice.user, AccessLevel.Owner);
    return { t, alice, mine, child, owned, other, hidden };
  }
  const sorted = (list: unknown[]) => [...list].sort();

  it('gives signed-in users their own groups unless all_available=true', async () => {
    const w = await world();
    const list = async (query: string, token?: string) =>
      ids((await server.request('GET', `/groups?search=${w.t}&${query}`, { token })).body);
    // Default order: name ascending.
    expect(await list('', w.alice.token)).toEqual([w.mine.id, w.child.id, w.owned.id]);
    expect(await list('all_available=false', w.alice.token)).toEqual([w.mine.id, w.child.id, w.owned.id]);
    expect(sorted(await list('all_available=true', w.alice.token))).toEqual(
      sorted([w.child.id, w.mine.id, w.owned.id, w.other.id]),
    );
    expect(await list('')).toEqual([w.other.id]);
    const admin = await server.factories.user({ admin: true });
    expect(await list('', admin.token)).toHaveLength(5);
    expect(await list('all_available=false', admin.token)).toEqual([]);
  });

  it('filters by owned, min_access_level, top_level_only, visibility and skip_groups', async () => {
    const w = await world();
    const list = async (query: string) =>
      ids((await server.request('GET', `/groups?search=${w.t}&${query}`, { token: w.alice.token })).body);
    expect(await list('owned=true')).toEqual([w.owned.id]);
    expect(await list('min_access_level=30')).toEqual([w.mine.id, w.child.id, w.owned.id]);
    expect(await list('min_access_level=40')).toEqual([w.owned.id]);
    expect(await list('top_level_only=true')).toEqual([w.mine.id, w.owned.id]);
    expect(await list('visibility=internal')).toEqual([w.mine.id]);
    expect(await list(`skip_groups[]=${w.mine.id}&skip_groups[]=${w.owned.id}`)).toEqual([w.child.id]);
    expect(await list(`skip_groups=${w.mine.id},${w.child.id}`)).toEqual([w.owned.id]);
    expect((await server.request('GET', '/groups?owned=true')).body).toEqual([]);
  });

  it('orders by name, path, id and similarity', async () => {
    const w = await world();
    const list = async (query: string) =>
      ids((await server.request('GET', `/groups?search=${w.t}&${query}`, { token: w.alice.token })).body);
    const byPath = [w.mine.id, w.child.id, w.owned.id];
    expect(await list('order_by=path')).toEqual(byPath);
    expect(await list('order_by=path&sort=desc')).toEqual([...byPath].reverse());
    expect(await list('order_by=id&sort=desc')).toEqual([w.owned.id, w.child.id, w.mine.id]);
    const similar = await server.request('GET', `/groups?search=${w.t}-owned&order_by=similarity`, {
      token: w.alice.token,
    });
    expect(ids(similar.body)).toEqual([w.owned.id]);
    const bad = await server.request('GET', '/groups?order_by=size');
    expect(bad).toMatchObject({ status: 400, body: { error: 'order_by does not have a valid value' } });
  });

  it('adds statistics for administrators only', async () => {
    const admin = await server.factories.user({ admin: true });
    const group = await server.factories.group({ visibility: 'public' });
    await server.factories.project({ namespace: group, owner: admin });
    const asAdmin = await server.request('GET', `/groups?statistics=true&search=${group.path}`, {
      token: admin.token,
    });
    expect((asAdmin.body as Json[])[0].statistics).toMatchObject({ storage_size: 0, repository_size: 0 });
    const anonymous = await server.request('GET', `/groups?statistics=true&search=${group.path}`);
    expect((anonymous.body as Json[])[0]).not.toHaveProperty('statistics');
  });

  it('paginates with every header', async () => {
    const alice = await server.factories.user();
    const t = tag();
    for (let i = 0; i < 5; i++) await createGroup(alice, { name: `${t} ${i}`, path: `${t}-${i}` });
    const response = await server.request('GET', `/groups?search=${t}&per_page=2&page=2`, {
      token: alice.token,
    });
    expect(ids(response.body)).toHaveLength(2);
    expect(response.headers.get('x-total')).toBe('5');
    expect(response.headers.get('x-total-pages')).toBe('3');
    expect(response.headers.get('x-per-page')).toBe('2');
    expect(response.headers.get('x-page')).toBe('2');
    expect(response.headers.get('x-next-page')).toBe('3');
    expect(response.headers.get('x-prev-page')).toBe('1');
    const next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    expect(next).toBe(`${server.url}/api/v4/groups?search=${t}&page=3&per_page=2`);
    const last = await send(next!, 'GET', { token: alice.token });
    expect(ids(last.body)).toHaveLength(1);
    expect(last.headers.get('x-next-page')).toBe('');
  });
});

describe('creating groups', () => {
  it('stores the documented defaults and the settings given', async () => {
    const alice = await server.factories.user();
    const plain = await createGroup(alice, { name: 'Plain', path: `plain-${tag()}` });
    expect(plain).toMatchObject({
      description: '',
      visibility: 'private',
      request_access_enabled: true,
      project_creation_level: 'developer',
      subgroup_creation_level: 'maintainer',
      share_with_group_lock: false,
      require_two_factor_authentication: false,
      two_factor_grace_period: 48,
      lfs_enabled: true,
      emails_enabled: true,
      emails_disabled: false,
      mentions_disabled: null,
      auto_devops_enabled: null,
      default_branch: null,
      default_branch_protection: 2,
      default_branch_protection_defaults: {
        allowed_to_push: [{ access_level: 40 }],
        allow_force_push: false,
        allowed_to_merge: [{ access_level: 40 }],
      },
      archived: false,
      marked_for_deletion_on: null,
    });
    expect(plain.runners_token).toBeUndefined();

    const tuned = await createGroup(alice, {
      name: 'Tuned',
      path: `tuned-${tag()}`,
      description: 'Set up',
      visibility: 'internal',
      request_access_enabled: false,
      project_creation_level: 'maintainer',
      subgroup_creation_level: 'owner',
      share_with_group_lock: true,
      require_two_factor_authentication: true,
      two_factor_grace_period: 12,
      lfs_enabled: false,
      emails_disabled: true,
      mentions_disabled: true,
      default_branch: 'trunk',
      default_branch_protection: 0,
      auto_devops_enabled: true,
    });
    expect(tuned).toMatchObject({
      description: 'Set up',
      visibility: 'internal',
      request_access_enabled: false,
      project_creation_level: 'maintainer',
      subgroup_creation_level: 'owner',
      share_with_group_lock: true,
      require_two_factor_authentication: true,
      two_factor_grace_period: 12,
      lfs_enabled: false,
      emails_enabled: false,
      emails_disabled: true,
      mentions_disabled: true,
      default_branch: 'trunk',
      default_branch_protection: 0,
      default_branch_protection_defaults: {
        allowed_to_push: [{ access_level: 30 }],
        allow_force_push: true,
        allowed_to_merge: [{ access_level: 30 }],
      },
      auto_devops_enabled: true,
    });
  });

  it('accepts form fields', async () => {
    const alice = await server.factories.user();
    const path = `form-${tag()}`;
    const response = await server.request('POST', '/groups', {
      token: alice.token,
      form: { name: 'Form', path, lfs_enabled: 'false', visibility: 'public' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ path, lfs_enabled: false, visibility: 'public' });
  });

  it.each([
    ['a user who may create groups', {}, 201],
    ['a user without can_create_group', { canCreateGroup: false }, 403],
    ['an external user', { external: true }, 403],
    ['an administrator without can_create_group', { admin: true, canCreateGroup: false }, 201],
  ] as Array<[string, { admin?: boolean; external?: boolean; canCreateGroup?: boolean }, number]>)(
    'top-level group by %s: %s',
    async (_label, attrs, status) => {
      const caller = await server.factories.user({ admin: attrs.admin, external: attrs.external });
      if (attrs.canCreateGroup === false)
        await server.dataSource.query('UPDATE users SET can_create_group = false WHERE id = $1', [
          caller.user.id,
        ]);
      const response = await server.request('POST', '/groups', {
        token: caller.token,
        json: { name: 'Top', path: `top-${tag()}` },
      });
      expect(response.status).toBe(status);
      if (status === 403) expect(response.body).toEqual({ message: '403 Forbidden' });
    },
  );

  it.each([
    ['maintainer', 'maintainer', AccessLevel.Maintainer, 201],
    ['maintainer', 'developer', AccessLevel.Developer, 403],
    ['owner', 'maintainer', AccessLevel.Maintainer, 403],
    ['owner', 'owner', AccessLevel.Owner, 201],
  ] as Array<[string, string, number, number]>)(
    'subgroup with subgroup_creation_level=%s by a %s: %s',
    async (level, _role, accessLevel, status) => {
      const owner = await server.factories.user();
      const parent = await createGroup(owner, {
        name: 'Parent',
        path: `parent-${tag()}`,
        subgroup_creation_level: level,
      });
      const bob = await server.factories.user();
      await server.dataSource.query(
        `INSERT INTO members (source_type, source_id, user_id, access_level) VALUES ('Namespace', $1, $2, $3)`,
        [parent.id, bob.user.id, accessLevel],
      );
      const response = await server.request('POST', '/groups', {
        token: bob.token,
        json: { name: 'Child', path: 'child', parent_id: parent.id },
      });
      expect(response.status).toBe(status);
    },
  );

  it('answers 404 for a parent the caller cannot see and 401 without a token', async () => {
    const bob = await server.factories.user();
    const hidden = await server.factories.group();
    const response = await server.request('POST', '/groups', {
      token: bob.token,
      json: { name: 'Child', path: 'child', parent_id: hidden.id },
    });
    expect(response).toMatchObject({ status: 404, body: { message: '404 Group Not Found' } });
    const anonymous = await server.request('POST', '/groups', { json: { name: 'x', path: 'x' } });
    expect(anonymous).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
  });

  it.each([
    [{ path: 'no-name' }, { error: 'name is missing' }],
    [{}, { error: 'name is missing, path is missing' }],
    [{ name: 'x', path: 'x-y', visibility: 'secret' }, { error: 'visibility does not have a valid value' }],
    [
      { name: 'x', path: 'x-z', project_creation_level: 'all' },
      { error: 'project_creation_level does not have a valid value' },
    ],
    [
      { name: 'x', path: '-dash' },
      {
        message:
          "Failed to save group {:path=>[\"can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.\"]}",
      },
    ],
    [{ name: 'x', path: 'api' }, { message: 'Failed to save group {:path=>["api is a reserved name"]}' }],
    [
      { name: '-x', path: 'x.git' },
      {
        message:
          "Failed to save group {:name=>[\"can contain only letters, digits, emoji, '_', '.', dash, space, parenthesis. It must start with letter, digit, emoji or '_'.\"], :path=>[\"can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.\"]}",
      },
    ],
    [
      { name: 'x', path: 'long-description', description: 'd'.repeat(501) },
      { message: 'Failed to save group {:description=>["is too long (maximum is 500 characters)"]}' },
    ],
  ] as Array<[Json, Json]>)('rejects %j with 400 %j', async (json, body) => {
    const alice = await server.factories.user();
    const response = await server.request('POST', '/groups', { token: alice.token, json });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(body);
  });

  it('keeps paths unique: top-level against users and groups, subgroups within the parent', async () => {
    const alice = await server.factories.user();
    const taken = { message: 'Failed to save group {:path=>["has already been taken"]}' };
    const asUser = await server.request('POST', '/groups', {
      token: alice.token,
      json: { name: 'Mine', path: alice.user.username.toUpperCase() },
    });
    expect(asUser).toMatchObject({ status: 400, body: taken });
    const parent = await createGroup(alice, { name: 'Parent', path: `parent-${tag()}` });
    await createGroup(alice, { name: 'First', path: 'first', parent_id: parent.id });
    const twice = await server.request('POST', '/groups', {
      token: alice.token,
      json: { name: 'Second', path: 'First', parent_id: parent.id },
    });
    expect(twice).toMatchObject({ status: 400, body: taken });
    const sameName = await server.request('POST', '/groups', {
      token: alice.token,
      json: { name: 'First', path: 'other', parent_id: parent.id },
    });
    expect(sameName).toMatchObject({
      status: 400,
      body: { message: 'Failed to save group {:name=>["has already been taken"]}' },
    });
    await server.factories.project({ owner: alice, namespace: { id: parent.id } as Namespace, path: 'app' });
    const asProject = await server.request('POST', '/groups', {
      token: alice.token,
      json: { name: 'App', path: 'app', parent_id: parent.id },
    });
    expect(asProject).toMatchObject({ status: 400, body: taken });
    // The same path elsewhere is fine.
    await createGroup(alice, { name: 'First', path: `first-${tag()}` });
  });

  it('keeps a subgroup no more visible than its parent', async () => {
    const alice = await server.factories.user();
    const parent = await createGroup(alice, {
      name: 'Parent',
      path: `parent-${tag()}`,
      visibility: 'internal',
    });
    const response = await server.request('POST', '/groups', {
      token: alice.token,
      json: { name: 'Child', path: 'child', parent_id: parent.id, visibility: 'public' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message:
        'Failed to save group {:visibility_level=>["public is not allowed since the parent group has a internal visibility."]}',
    });
  });
});

describe('reading a group', () => {
  it('embeds its own and shared projects the caller may see, unless with_projects=false', async () => {
    const admin = await server.factories.user({ admin: true });
    const group = await server.factories.group({ visibility: 'public' });
    const open = await server.factories.project({ namespace: group, owner: admin, visibility: 'public' });
    await server.factories.project({ namespace: group, owner: admin, visibility: 'private' });
    const elsewhere = await server.factories.project({ owner: admin, visibility: 'public' });
    await server.factories.share(elsewhere, group, AccessLevel.Developer);

    const anonymous = (await server.request('GET', `/groups/${group.id}`)).body as Json;
    expect(ids(anonymous.projects)).toEqual([open.id]);
    expect(ids(anonymous.shared_projects)).toEqual([elsewhere.id]);
    expect((anonymous.projects as Json[])[0]).toHaveProperty('_links');
    expect(anonymous).not.toHaveProperty('runners_token');
    const asAdmin = (await server.request('GET', `/groups/${group.id}`, { token: admin.token })).body as Json;
    expect(ids(asAdmin.projects)).toHaveLength(2);
    expect(asAdmin.runners_token).toMatch(/^GR1348941/);
    const bare = (await server.request('GET', `/groups/${group.id}?with_projects=false`)).body as Json;
    expect(bare).not.toHaveProperty('projects');
    expect(bare).not.toHaveProperty('shared_projects');
  });

  it('shows runners_token to Owners only', async () => {
    const group = await server.factories.group({ visibility: 'public' });
    const owner = await server.factories.user();
    const maintainer = await server.factories.user();
    await server.factories.member(group, owner.user, AccessLevel.Owner);
    await server.factories.member(group, maintainer.user, AccessLevel.Maintainer);
    const as = async (user: TestUser) =>
      (await server.request('GET', `/groups/${group.id}`, { token: user.token })).body as Json;
    expect(await as(owner)).toHaveProperty('runners_token');
    expect(await as(maintainer)).not.toHaveProperty('runners_token');
  });
});

describe('editing a group', () => {
  it('carries a new path and name into every descendant and their projects', async () => {
    const alice = await server.factories.user();
    const t = tag();
    const top = await createGroup(alice, { name: 'Top', path: `top-${t}` });
    const middle = await createGroup(alice, { name: 'Middle', path: 'middle', parent_id: top.id });
    const bottom = await createGroup(alice, { name: 'Bottom', path: 'bottom', parent_id: middle.id });
    const project = await server.factories.project({
      owner: alice,
      namespace: { id: bottom.id } as Namespace,
      path: 'app',
    });

    const response = await server.request('PUT', `/groups/${top.id}`, {
      token: alice.token,
      json: { name: 'Renamed', path: `renamed-${t}`, description: 'New' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: 'Renamed',
      path: `renamed-${t}`,
      full_path: `renamed-${t}`,
      description: 'New',
      projects: [],
    });
    const deep = (await server.request('GET', `/groups/${encoded(`renamed-${t}/middle/bottom`)}`, {
      token: alice.token,
    })) as { body: Json };
    expect(deep.body).toMatchObject({ id: bottom.id, full_name: 'Renamed / Middle / Bottom' });
    const old = await server.request('GET', `/groups/${encoded(`top-${t}/middle`)}`, { token: alice.token });
    expect(old.status).toBe(404);
    const moved = await server.request('GET', `/projects/${project.id}`, { token: alice.token });
    expect((moved.body as Json).path_with_namespace).toBe(`renamed-${t}/middle/bottom/app`);

    const inner = await server.request('PUT', `/groups/${middle.id}`, {
      token: alice.token,
      json: { path: 'centre' },
    });
    expect(inner.body).toMatchObject({ full_path: `renamed-${t}/centre`, full_name: 'Renamed / Middle' });
    const leaf = (await server.request('GET', `/groups/${bottom.id}`, { token: alice.token })).body as Json;
    expect(leaf.full_path).toBe(`renamed-${t}/centre/bottom`);
  });

  it('changes settings and keeps the ones left out', async () => {
    const alice = await server.factories.user();
    const group = await createGroup(alice, { name: 'Set', path: `set-${tag()}`, lfs_enabled: false });
    const response = await server.request('PUT', `/groups/${group.id}`, {
      token: alice.token,
      json: { request_access_enabled: false, subgroup_creation_level: 'owner', emails_enabled: false },
    });
    expect(response.body).toMatchObject({
      lfs_enabled: false,
      request_access_enabled: false,
      subgroup_creation_level: 'owner',
      emails_enabled: false,
      emails_disabled: true,
      name: 'Set',
    });
  });

  it.each([
    ['Owner', AccessLevel.Owner, 200],
    ['Maintainer', AccessLevel.Maintainer, 403],
    ['Guest', AccessLevel.Guest, 403],
  ] as Array<[string, number, number]>)('by a %s of the parent: %s', async (_role, level, status) => {
    const top = await server.factories.group();
    const sub = await server.factories.group({ parent: top });
    const bob = await server.factories.user();
    await server.factories.member(top, bob.user, level);
    const response = await server.request('PUT', `/groups/${sub.id}`, {
      token: bob.token,
      json: { description: 'changed' },
    });
    expect(response.status).toBe(status);
  });

  it('answers 404 to callers who cannot see the group', async () => {
    const group = await server.factories.group();
    const bob = await server.factories.user();
    const response = await server.request('PUT', `/groups/${group.id}`, {
      token: bob.token,
      json: { description: 'x' },
    });
    expect(response).toMatchObject({ status: 404, body: { message: '404 Group Not Found' } });
  });

  it('keeps visibility between the parent and the contents', async () => {
    const admin = await server.factories.user({ admin: true });
    const top = await server.factories.group({ visibility: 'internal' });
    const sub = await server.factories.group({ parent: top, visibility: 'internal' });
    const other = await server.factories.group({ visibility: 'public' });
    await server.factories.project({ namespace: other, owner: admin, visibility: 'public' });
    const put = (group: Namespace, json: Json) =>
      server.request('PUT', `/groups/${group.id}`, { token: admin.token, json });

    expect(await put(sub, { visibility: 'public' })).toMatchObject({
      status: 400,
      body: {
        message: {
          visibility_level: ['public is not allowed since the parent group has a internal visibility.'],
        },
      },
    });
    expect((await put(top, { visibility: 'private' })).body).toEqual({
      message: {
        visibility_level: ['private is not allowed since there are sub-groups with higher visibility.'],
      },
    });
    expect((await put(other, { visibility: 'internal' })).body).toEqual({
      message: {
        visibility_level: [
          'internal is not allowed since this group contains projects with higher visibility.',
        ],
      },
    });
    expect((await put(top, { visibility: 'public' })).status).toBe(200);
    expect((await put(sub, { visibility: 'private' })).status).toBe(200);
  });

  it('refuses a path that is taken', async () => {
    const alice = await server.factories.user();
    const first = await createGroup(alice, { name: 'First', path: `first-${tag()}` });
    const second = await createGroup(alice, { name: 'Second', path: `second-${tag()}` });
    const response = await server.request('PUT', `/groups/${second.id}`, {
      token: alice.token,
      json: { path: first.path },
    });
    expect(response).toMatchObject({ status: 400, body: { message: { path: ['has already been taken'] } } });
    const reserved = await server.request('PUT', `/groups/${second.id}`, {
      token: alice.token,
      json: { path: 'admin' },
    });
    expect(reserved.body).toEqual({ message: { path: ['admin is a reserved name'] } });
  });
});

describe('deleting a group', () => {
  it('removes the group, its subgroups, their projects, members and shares', async () => {
    const alice = await server.factories.user();
    const top = await createGroup(alice, { name: 'Doomed', path: `doomed-${tag()}` });
    const sub = await createGroup(alice, { name: 'Sub', path: 'sub', parent_id: top.id });
    const deep = await createGroup(alice, { name: 'Deep', path: 'deep', parent_id: sub.id });
    const project = await server.factories.project({ owner: alice, namespace: { id: deep.id } as Namespace });
    const bob = await server.factories.user();
    await server.factories.member(project, bob.user, AccessLevel.Developer);
    const outside = await server.factories.project({ owner: alice });
    await server.factories.share(outside, { id: sub.id } as Namespace, AccessLevel.Reporter);
    const bot = await server.services.users.createUser({
      username: `bot-${tag()}`,
      name: 'Token bot',
      email: `bot-${tag()}@noreply.example.com`,
      bot: true,
      userType: 'project_bot',
    });
    await server.factories.member({ id: sub.id } as Namespace, bot, AccessLevel.Maintainer);
    const repository = server.services.storage.diskPath('default', project.id);
    expect(fs.existsSync(repository)).toBe(true);

    const response = await server.request('DELETE', `/groups/${top.id}`, { token: alice.token });
    expect(response).toMatchObject({ status: 202, body: { message: '202 Accepted' } });
    for (const id of [top.id, sub.id, deep.id]) {
      expect((await server.request('GET', `/groups/${id}`, { token: alice.token })).status).toBe(404);
    }
    expect((await server.request('GET', `/projects/${project.id}`, { token: alice.token })).status).toBe(404);
    const [counts]: Json[] = await server.dataSource.query(
      `SELECT
         (SELECT count(*)::int FROM members WHERE (source_type = 'Namespace' AND source_id = ANY($1::int[]))
           OR (source_type = 'Project' AND source_id = $2)) AS members,
         (SELECT count(*)::int FROM project_group_links WHERE project_id = $3) AS links,
         (SELECT count(*)::int FROM projects WHERE id = $3) AS outside`,
      [[top.id, sub.id, deep.id], project.id, outside.id],
    );
    expect(counts).toEqual({ members: 0, links: 0, outside: 1 });
    expect(fs.existsSync(repository)).toBe(false);
    expect(await server.dataSource.query('SELECT id FROM users WHERE id = $1', [bot.id])).toEqual([]);
  });

  it.each([
    ['Owner', AccessLevel.Owner, 202],
    ['Maintainer', AccessLevel.Maintainer, 403],
  ] as Array<[string, number, number]>)('by a %s: %s', async (_role, level, status) => {
    const group = await server.factories.group();
    const bob = await server.factories.user();
    await server.factories.member(group, bob.user, level);
    const response = await server.request('DELETE', `/groups/${group.id}`, { token: bob.token });
    expect(response.status).toBe(status);
    if (status === 403) expect(response.body).toEqual({ message: '403 Forbidden' });
  });

  it('checks full_path when permanently_remove is sent', async () => {
    const admin = await server.factories.user({ admin: true });
    const top = await server.factories.group();
    const sub = await server.factories.group({ parent: top });
    const wrong = await server.request(
      'DELETE',
      `/groups/${sub.id}?permanently_remove=true&full_path=${sub.path}`,
      {
        token: admin.token,
      },
    );
    expect(wrong).toMatchObject({
      status: 400,
      body: { message: '`full_path` is incorrect. You must enter the complete path for the subgroup.' },
    });
    const right = await server.request(
      'DELETE',
      `/groups/${sub.id}?permanently_remove=true&full_path=${encoded(sub.fullPath)}`,
      { token: admin.token },
    );
    expect(right.status).toBe(202);
  });
});

describe('subgroups and descendants', () => {
  async function tree() {
    const alice = await server.factories.user();
    const top = await server.factories.group({ visibility: 'public' });
    const a = await server.factories.group({ parent: top, visibility: 'public', path: `a-${tag()}` });
    const b = await server.factories.group({ parent: top, visibility: 'private', path: `b-${tag()}` });
    const deep = await server.factories.group({ parent: a, visibility: 'public', path: `deep-${tag()}` });
    await server.factories.member(top, alice.user, AccessLevel.Developer);
    return { alice, top, a, b, deep };
  }

  it('lists direct subgroups or every descendant, as visible to the caller', async () => {
    const t = await tree();
    const list = async (path: string, token?: string) =>
      ids((await server.request('GET', `/groups/${t.top.id}/${path}`, { token })).body);
    expect(await list('subgroups', t.alice.token)).toEqual([t.a.id, t.b.id]);
    expect(await list('descendant_groups', t.alice.token)).toEqual([t.a.id, t.b.id, t.deep.id]);
    expect(await list('subgroups')).toEqual([t.a.id]);
    expect(await list('descendant_groups?search=deep')).toEqual([t.deep.id]);
    const outsider = await server.factories.user();
    expect(await list('subgroups', outsider.token)).toEqual([]);
    expect(await list('subgroups?all_available=true', outsider.token)).toEqual([t.a.id]);
    expect(await list(`subgroups?skip_groups[]=${t.a.id}`, t.alice.token)).toEqual([t.b.id]);
  });

  it('answers 404 for a parent the caller cannot see', async () => {
    const hidden = await server.factories.group();
    const response = await server.request('GET', `/groups/${hidden.id}/subgroups`);
    expect(response).toMatchObject({ status: 404, body: { message: '404 Group Not Found' } });
  });

  it('paginates subgroups', async () => {
    const top = await server.factories.group({ visibility: 'public' });
    for (let i = 0; i < 3; i++) await server.factories.group({ parent: top, visibility: 'public' });
    const response = await server.request('GET', `/groups/${top.id}/subgroups?per_page=2`);
    expect(ids(response.body)).toHaveLength(2);
    expect(response.headers.get('x-total')).toBe('3');
    expect(response.headers.get('link')).toContain(
      `<${server.url}/api/v4/groups/${top.id}/subgroups?page=2&per_page=2>; rel="next"`,
    );
  });
});

describe("a group's projects", () => {
  async function world() {
    const admin = await server.factories.user({ admin: true });
    const alice = await server.factories.user();
    const group = await server.factories.group({ visibility: 'public' });
    const sub = await server.factories.group({ parent: group, visibility: 'public' });
    const t = tag();
    const make = (namespace: Namespace, path: string, extra: Json = {}) =>
      server.factories.project({
        owner: admin,
        namespace,
        path: `${t}-${path}`,
        visibility: 'public',
        ...extra,
      });
    const alpha = await make(group, 'alpha', { description: 'First one', topics: ['go'] });
    const hidden = await make(group, 'hidden', { visibility: 'private' });
    const nested = await make(sub, 'nested');
    const outside = await server.factories.group({ visibility: 'public' });
    const shared = await make(outside, 'shared');
    await server.factories.share(shared, group, AccessLevel.Developer);
    await server.factories.member(hidden, alice.user, AccessLevel.Owner);
    return { admin, alice, group, sub, t, alpha, hidden, nested, shared };
  }

  it('lists own, shared and optionally nested projects the caller may see', async () => {
    const w = await world();
    const list = async (query: string, token?: string) => {
      const response = await server.request('GET', `/groups/${w.group.id}/projects?${query}`, { token });
      expect(response.status).toBe(200);
      return ids(response.body);
    };
    const sorted = (values: unknown[]) => [...values].sort();
    expect(sorted(await list('', w.alice.token))).toEqual(sorted([w.alpha.id, w.hidden.id, w.shared.id]));
    expect(sorted(await list(''))).toEqual(sorted([w.alpha.id, w.shared.id]));
    expect(sorted(await list('with_shared=false', w.alice.token))).toEqual(sorted([w.alpha.id, w.hidden.id]));
    expect(sorted(await list('include_subgroups=true&with_shared=false'))).toEqual(
      sorted([w.alpha.id, w.nested.id]),
    );
    expect(await list('visibility=private', w.alice.token)).toEqual([w.hidden.id]);
    expect(await list('search=first')).toEqual([w.alpha.id]);
    expect(await list('topic=go')).toEqual([w.alpha.id]);
    expect(await list('owned=true', w.alice.token)).toEqual([w.hidden.id]);
    expect(await list('min_access_level=30', w.alice.token)).toEqual([w.hidden.id]);
    expect(await list('starred=true', w.alice.token)).toEqual([]);
    expect(await list('owned=true')).toEqual([]);
    expect(await list('order_by=path&sort=asc', w.admin.token)).toEqual([
      w.alpha.id,
      w.hidden.id,
      w.shared.id,
    ]);
    expect(await list('order_by=similarity&search=alpha')).toEqual([w.alpha.id]);
    await server.dataSource.query('UPDATE projects SET archived = true WHERE id = $1', [w.alpha.id]);
    expect(await list('archived=true')).toEqual([w.alpha.id]);
    const nested = await server.request('GET', `/groups/${encoded(w.sub.fullPath)}/projects`);
    expect(ids(nested.body)).toEqual([w.nested.id]);
  });

  it('gives the simple shape without a token or with simple=true', async () => {
    const w = await world();
    const anonymous = (await server.request('GET', `/groups/${w.group.id}/projects?with_shared=false`))
      .body as Json[];
    expect(anonymous[0]).not.toHaveProperty('_links');
    const simple = (
      await server.request('GET', `/groups/${w.group.id}/projects?simple=true`, { token: w.alice.token })
    ).body as Json[];
    expect(simple[0]).not.toHaveProperty('_links');
    const full = (await server.request('GET', `/groups/${w.group.id}/projects`, { token: w.alice.token }))
      .body as Json[];
    expect(full[0]).toHaveProperty('_links');
    const attributes = (
      await server.request('GET', `/groups/${w.group.id}/projects?with_custom_attributes=true`, {
        token: w.admin.token,
      })
    ).body as Json[];
    expect(attributes[0].custom_attributes).toEqual([]);
  });

  it('paginates with every header', async () => {
    const w = await world();
    const response = await server.request('GET', `/groups/${w.group.id}/projects?per_page=1&page=2`, {
      token: w.alice.token,
    });
    expect(ids(response.body)).toHaveLength(1);
    expect(response.headers.get('x-total')).toBe('3');
    expect(response.headers.get('x-total-pages')).toBe('3');
    expect(response.headers.get('x-next-page')).toBe('3');
    expect(response.headers.get('x-prev-page')).toBe('1');
  });

  it('answers 404 for a group the caller cannot see', async () => {
    const hidden = await server.factories.group();
    const bob = await server.factories.user();
    const response = await server.request('GET', `/groups/${hidden.id}/projects`, { token: bob.token });
    expect(response).toMatchObject({ status: 404, body: { message: '404 Group Not Found' } });
  });
});
