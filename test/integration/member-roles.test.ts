/** Custom member roles: instance and group CRUD, assignment through the member endpoints, and what each flag grants. */
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { MEMBER_ROLE_PERMISSIONS } from '../../src/core/abilities.js';
import { MEMBER_ROLE_GRANTS } from '../../src/member_roles/abilities.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer, type TestServer } from '../helpers/server.js';

const server = useTestServer();
const premium = useTestServer({ env: { FORGE_TIER: 'premium' } });

type Json = Record<string, unknown>;
const { Guest, Planner, Reporter, Developer, Maintainer, Owner } = AccessLevel;
let counter = 0;
const unique = (prefix: string) => `${prefix} ${Date.now().toString(36)}-${++counter}`;

async function admin(on: TestServer = server) {
  return on.factories.user({ admin: true });
}

async function createRole(token: string, path: string, body: Json) {
  return server.request('POST', path, { token, json: { name: unique('role'), ...body } });
}

describe('instance member roles', () => {
  it('creates, lists and deletes roles for administrators, with every flag and a null description', async () => {
    const root = await admin();
    const created = await createRole(root.token, '/member_roles', {
      base_access_level: Planner,
      read_code: true,
      remove_project: true,
    });
    expect(created.status).toBe(201);
    const role = created.body as Json;
    expect(role).toMatchObject({ group_id: null, base_access_level: Planner, description: null });
    for (const flag of MEMBER_ROLE_PERMISSIONS)
      expect(role[flag], flag).toBe(flag === 'read_code' || flag === 'remove_project');

    const list = await server.request('GET', '/member_roles', { token: root.token });
    expect(list.status).toBe(200);
    expect((list.body as Json[]).map((r) => r.id)).toContain(role.id);

    const removed = await server.request('DELETE', `/member_roles/${role.id as number}`, {
      token: root.token,
    });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    const again = await server.request('DELETE', `/member_roles/${role.id as number}`, { token: root.token });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Member Role Not Found' });
  });

  it('accepts the token as PRIVATE-TOKEN and as Authorization: Bearer', async () => {
    const root = await admin();
    const bearer = await server.request('GET', '/member_roles', {
      headers: { Authorization: `Bearer ${root.token}` },
    });
    expect(bearer.status).toBe(200);
    const created = await server.request('POST', '/member_roles', {
      headers: { Authorization: `Bearer ${root.token}` },
      json: { name: unique('bearer'), base_access_level: Guest },
    });
    expect(created.status).toBe(201);
  });

  it.each([
    ['anonymous', null, 401],
    ['a signed-in user', false, 403],
  ] as const)('refuses %s', async (_, isAdmin, status) => {
    const user = isAdmin === null ? null : await server.factories.user();
    for (const [method, path] of [
      ['GET', '/member_roles'],
      ['POST', '/member_roles'],
      ['DELETE', '/member_roles/1'],
    ] as const) {
      const response = await server.request(method, path, {
        token: user?.token,
        json: method === 'POST' ? { name: 'x', base_access_level: Guest } : undefined,
      });
      expect(response.status, `${method} ${path}`).toBe(status);
    }
  });

  it.each([
    [{ base_access_level: Guest }, { error: 'name is missing' }],
    [{ name: 'No level' }, { error: 'base_access_level is missing' }],
    [{ name: 'Bad level', base_access_level: 1 }, { error: 'base_access_level does not have a valid value' }],
    [{ name: 'Minimal', base_access_level: 5 }, { error: 'base_access_level does not have a valid value' }],
  ])('validates %j', async (body, error) => {
    const root = await admin();
    const response = await server.request('POST', '/member_roles', { token: root.token, json: body });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(error);
  });

  it('takes each of the six base levels, and refuses a name already used', async () => {
    const root = await admin();
    for (const level of [Guest, Planner, Reporter, Developer, Maintainer, Owner]) {
      const response = await createRole(root.token, '/member_roles', { base_access_level: level });
      expect(response.status, String(level)).toBe(201);
    }
    const name = unique('taken');
    await createRole(root.token, '/member_roles', { name, base_access_level: Guest });
    const duplicate = await createRole(root.token, '/member_roles', { name, base_access_level: Guest });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body).toEqual({ message: 'Name has already been taken' });
  });

  it('is absent below Ultimate', async () => {
    const root = await admin(premium);
    const group = await premium.factories.group();
    for (const path of ['/member_roles', `/groups/${group.id}/member_roles`]) {
      const response = await premium.request('GET', path, { token: root.token });
      expect(response.status, path).toBe(404);
    }
  });
});

describe('group member roles', () => {
  async function groupWithOwner() {
    const group = await server.factories.group();
    const owner = await server.factories.memberOf(group, Owner);
    return { group, owner };
  }

  it('lets Owners of a top-level group create, list and delete its roles', async () => {
    const { group, owner } = await groupWithOwner();
    const created = await createRole(owner.token, `/groups/${group.id}/member_roles`, {
      description: 'Reads code',
      base_access_level: Guest,
      read_code: true,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ group_id: group.id, description: 'Reads code', read_code: true });
    const id = (created.body as Json).id as number;

    const list = await server.request('GET', `/groups/${group.id}/member_roles`, {
      headers: { Authorization: `Bearer ${owner.token}` },
    });
    expect((list.body as Json[]).map((r) => r.id)).toEqual([id]);
    // A group's role is not an instance role, nor another group's.
    const other = await groupWithOwner();
    const elsewhere = await server.request('DELETE', `/groups/${other.group.id}/member_roles/${id}`, {
      token: other.owner.token,
    });
    expect(elsewhere.status).toBe(404);
    const removed = await server.request('DELETE', `/groups/${group.id}/member_roles/${id}`, {
      token: owner.token,
    });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
  });

  it('refuses subgroups with GitLab message', async () => {
    const { group, owner } = await groupWithOwner();
    const sub = await server.factories.group({ parent: group });
    const response = await createRole(owner.token, `/groups/${sub.id}/member_roles`, {
      base_access_level: Guest,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ message: 'Creation of member role is allowed only for root groups' });
    const list = await server.request('GET', `/groups/${sub.id}/member_roles`, { token: owner.token });
    expect(list.body).toEqual([]);
  });

  it.each([
    ['a Maintainer', Maintainer, 403],
    ['a non-member of the private group', 0, 404],
  ])('refuses %s', async (_, level, status) => {
    const { group } = await groupWithOwner();
    const user = level ? await server.factories.memberOf(group, level) : await server.factories.user();
    const list = await server.request('GET', `/groups/${group.id}/member_roles`, { token: user.token });
    expect(list.status).toBe(status);
    const create = await createRole(user.token, `/groups/${group.id}/member_roles`, {
      base_access_level: Guest,
    });
    expect(create.status).toBe(status);
  });

  it('keeps a role still given to a member', async () => {
    const { group, owner } = await groupWithOwner();
    const role = (
      await createRole(owner.token, `/groups/${group.id}/member_roles`, { base_access_level: Guest })
    ).body as Json;
    const user = await server.factories.user();
    const added = await server.request('POST', `/groups/${group.id}/members`, {
      token: owner.token,
      json: { user_id: user.user.id, access_level: Guest, member_role_id: role.id },
    });
    expect(added.status).toBe(201);
    const refused = await server.request('DELETE', `/groups/${group.id}/member_roles/${role.id as number}`, {
      token: owner.token,
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      message:
        'Role is assigned to one or more group members. Remove role from all group members, then delete role.',
    });
  });
});

describe('updating member roles', () => {
  const MISSING = { error: 'name, description are missing, at least one parameter must be provided' };

  /** An instance role and a group role with its Owner, each named and described. */
  async function roles() {
    const root = await admin();
    const group = await server.factories.group();
    const owner = await server.factories.memberOf(group, Owner);
    const base = { description: 'Reads code', base_access_level: Guest, read_code: true };
    const instance = (await createRole(root.token, '/member_roles', base)).body as Json;
    const grouped = (await createRole(owner.token, `/groups/${group.id}/member_roles`, base)).body as Json;
    const taken = unique('taken');
    await createRole(root.token, '/member_roles', { name: taken, base_access_level: Guest });
    await createRole(owner.token, `/groups/${group.id}/member_roles`, {
      name: taken,
      base_access_level: Guest,
    });
    return {
      root,
      owner,
      taken,
      instance: { token: root.token, path: `/member_roles/${instance.id as number}`, role: instance },
      group: {
        token: owner.token,
        path: `/groups/${group.id}/member_roles/${grouped.id as number}`,
        role: grouped,
      },
      groupId: group.id,
      groupEntity: group,
    };
  }

  const NEW_NAME = 'Renamed role';
  it.each([
    ['instance', 'renames', { name: NEW_NAME }, 200, { name: NEW_NAME, description: 'Reads code' }],
    ['group', 'renames', { name: NEW_NAME }, 200, { name: NEW_NAME, description: 'Reads code' }],
    ['instance', 'clears the description', { description: null }, 200, { description: null }],
    ['group', 'changes the description', { description: 'Other' }, 200, { description: 'Other' }],
    [
      'group',
      'ignores the level and flags',
      { name: NEW_NAME, base_access_level: Owner, read_code: false, remove_project: true },
      200,
      { name: NEW_NAME, base_access_level: Guest, read_code: true, remove_project: false },
    ],
    ['instance', 'refuses a blank name', { name: '   ' }, 400, { message: "Name can't be blank" }],
    ['group', 'refuses an empty name', { name: '' }, 400, null],
    ['instance', 'refuses a taken name', { name: 'TAKEN' }, 400, { message: 'Name has already been taken' }],
    ['group', 'refuses a taken name', { name: 'TAKEN' }, 400, { message: 'Name has already been taken' }],
    ['instance', 'refuses an empty body', {}, 400, MISSING],
    ['group', 'refuses only ignored keys', { base_access_level: Reporter }, 400, MISSING],
  ] as const)('%s: %s', async (kind, _, json, status, expected) => {
    const setup = await roles();
    const target = setup[kind];
    // TAKEN stands for a name already used in the same scope; renames get a fresh name.
    const names: Record<string, string> = { TAKEN: setup.taken, [NEW_NAME]: unique(NEW_NAME) };
    const name = 'name' in json ? (names[json.name] ?? json.name) : undefined;
    const body = name === undefined ? json : { ...json, name };
    const response = await server.request('PUT', target.path, { token: target.token, json: body });
    expect(response.status).toBe(status);
    const listPath = kind === 'instance' ? '/member_roles' : `/groups/${setup.groupId}/member_roles`;
    const list = await server.request('GET', listPath, { token: target.token });
    const stored = (list.body as Json[]).find((r) => r.id === target.role.id);
    if (status === 200) {
      const want = name === undefined ? expected : { ...expected, name };
      expect(response.body).toMatchObject({ ...want, id: target.role.id, group_id: target.role.group_id });
      expect(stored).toEqual(response.body);
    } else {
      if (expected) expect(response.body).toEqual(expected);
      expect(stored).toEqual(target.role);
    }
  });

  it('answers 404 for an unknown role, or one of another group or scope', async () => {
    const setup = await roles();
    const other = await server.factories.group();
    const otherOwner = await server.factories.memberOf(other, Owner);
    const groupRoleId = setup.group.role.id as number;
    const instanceRoleId = setup.instance.role.id as number;
    for (const [token, path] of [
      [setup.root.token, '/member_roles/2147483647'],
      [setup.root.token, `/member_roles/${groupRoleId}`],
      [setup.owner.token, `/groups/${setup.groupId}/member_roles/${instanceRoleId}`],
      [setup.root.token, `/groups/${setup.groupId}/member_roles/${instanceRoleId}`],
      [otherOwner.token, `/groups/${other.id}/member_roles/${groupRoleId}`],
    ] as const) {
      const response = await server.request('PUT', path, { token, json: { name: unique('x') } });
      expect(response.status, path).toBe(404);
      expect(response.body, path).toEqual({ message: '404 Member Role Not Found' });
    }
  });

  it.each([
    ['anonymous', null, 401, 401],
    ['a signed-in non-member', 0, 403, 404],
    ['a Maintainer of the group', Maintainer, 403, 403],
  ] as const)('refuses %s', async (_, level, instanceStatus, groupStatus) => {
    const setup = await roles();
    const group = setup.groupEntity;
    const user =
      level === null
        ? null
        : level
          ? await server.factories.memberOf(group, level)
          : await server.factories.user();
    const json = { name: unique('refused') };
    const onInstance = await server.request('PUT', setup.instance.path, { token: user?.token, json });
    expect(onInstance.status).toBe(instanceStatus);
    const onGroup = await server.request('PUT', setup.group.path, { token: user?.token, json });
    expect(onGroup.status).toBe(groupStatus);
  });
});

describe('assigning roles through the member endpoints', () => {
  async function setup() {
    const group = await server.factories.group();
    const sub = await server.factories.group({ parent: group });
    const project = await server.factories.project({ namespace: sub });
    const owner = await server.factories.memberOf(group, Owner);
    const role = (
      await createRole(owner.token, `/groups/${group.id}/member_roles`, {
        base_access_level: Guest,
        read_code: true,
      })
    ).body as Json;
    return { group, sub, project, owner, role };
  }

  it.each(['project', 'group', 'subgroup'] as const)(
    'gives a role of the top-level group on %s members, shows it, and takes it away',
    async (kind) => {
      const { group, sub, project, owner, role } = await setup();
      const base =
        kind === 'project' ? `/projects/${project.id}` : `/groups/${kind === 'group' ? group.id : sub.id}`;
      const user = await server.factories.user();
      const added = await server.request('POST', `${base}/members`, {
        token: owner.token,
        json: { user_id: user.user.id, access_level: Guest, member_role_id: role.id },
      });
      expect(added.status).toBe(201);
      expect((added.body as Json).member_role).toMatchObject({
        id: role.id,
        group_id: group.id,
        read_code: true,
      });
      const shown = await server.request('GET', `${base}/members/${user.user.id}`, { token: owner.token });
      expect((shown.body as Json).member_role).toMatchObject({ id: role.id });
      const listed = await server.request('GET', `${base}/members`, { token: owner.token });
      const row = (listed.body as Json[]).find((m) => m.id === user.user.id)!;
      expect(row.member_role).toMatchObject({ id: role.id });

      // Changing the level while the role stays is refused; clearing the role frees it.
      const locked = await server.request('PUT', `${base}/members/${user.user.id}`, {
        token: owner.token,
        json: { access_level: Reporter },
      });
      expect(locked.status).toBe(400);
      expect(locked.body).toEqual({
        message: {
          access_level: ['cannot be changed because of an existing association with a custom role'],
        },
      });
      const cleared = await server.request('PUT', `${base}/members/${user.user.id}`, {
        token: owner.token,
        json: { access_level: Reporter, member_role_id: null },
      });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ access_level: Reporter });
      expect((cleared.body as Json).member_role).toBeUndefined();
    },
  );

  it('validates the role as GitLab does', async () => {
    const { project, owner, role } = await setup();
    const other = await server.factories.group();
    const root = await admin();
    const foreign = (
      await createRole(root.token, `/groups/${other.id}/member_roles`, { base_access_level: Guest })
    ).body as Json;
    const instance = (await createRole(root.token, '/member_roles', { base_access_level: Developer }))
      .body as Json;
    const cases: Array<[Json, number, unknown]> = [
      [
        { access_level: Reporter, member_role_id: role.id },
        400,
        {
          message: {
            member_role_id: ["role's base access level does not match the access level of the membership"],
          },
        },
      ],
      [{ access_level: Guest, member_role_id: foreign.id }, 400, { message: { member_role: ['not found'] } }],
      [{ access_level: Guest, member_role_id: 2147483647 }, 400, { message: { member_role: ['not found'] } }],
      [{ access_level: Developer, member_role_id: instance.id }, 201, undefined],
    ];
    for (const [body, status, error] of cases) {
      const user = await server.factories.user();
      const response = await server.request('POST', `/projects/${project.id}/members`, {
        token: owner.token,
        json: { user_id: user.user.id, ...body },
      });
      expect(response.status, JSON.stringify(body)).toBe(status);
      if (error) expect(response.body).toEqual(error);
    }
  });

  it.each(['project', 'group'] as const)('makes Planner (15) a real level of %s members', async (kind) => {
    const { group, project, owner } = await setup();
    const base = kind === 'project' ? `/projects/${project.id}` : `/groups/${group.id}`;
    const [first, second] = [await server.factories.user(), await server.factories.user()];
    const added = await server.request('POST', `${base}/members`, {
      token: owner.token,
      json: { user_id: first.user.id, access_level: Planner },
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ access_level: Planner });
    await server.request('POST', `${base}/members`, {
      token: owner.token,
      json: { user_id: second.user.id, access_level: Guest },
    });
    const updated = await server.request('PUT', `${base}/members/${second.user.id}`, {
      token: owner.token,
      json: { access_level: Planner },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ access_level: Planner });
    // A Planner manages labels, which a Guest may not.
    if (kind === 'project') {
      const label = await server.request('POST', `${base}/labels`, {
        token: first.token,
        json: { name: unique('planned').replace(/ /g, '-'), color: '#FF0000' },
      });
      expect(label.status).toBe(201);
    }
  });

  it('ignores member_role_id below Ultimate', async () => {
    const root = await admin(premium);
    const project = await premium.factories.project({ owner: root });
    const user = await premium.factories.user();
    const added = await premium.request('POST', `/projects/${project.id}/members`, {
      token: root.token,
      json: { user_id: user.user.id, access_level: Guest, member_role_id: 1 },
    });
    expect(added.status).toBe(201);
    expect((added.body as Json).member_role).toBeUndefined();
  });
});

/**
 * Each flag opens its operation for a Guest of the top-level group whose membership carries a role with
 * that flag, and not for a Guest without it. The role is on the group; projects inside inherit it.
 */
interface FlagCase {
  flag: string;
  call: (ctx: { group: Namespace; projectId: number; target: TestUser }) => {
    method: string;
    path: string;
    json?: Json;
  };
  allowed: number;
  refused: number;
}

const FLAG_CASES: FlagCase[] = [
  {
    flag: 'read_code',
    call: (c) => ({ method: 'GET', path: `/projects/${c.projectId}/repository/tree` }),
    allowed: 200,
    refused: 403,
  },
  {
    flag: 'archive_project',
    call: (c) => ({ method: 'POST', path: `/projects/${c.projectId}/archive` }),
    allowed: 201,
    refused: 403,
  },
  {
    flag: 'remove_project',
    call: (c) => ({ method: 'DELETE', path: `/projects/${c.projectId}` }),
    allowed: 202,
    refused: 403,
  },
  {
    flag: 'manage_project_access_tokens',
    call: (c) => ({ method: 'GET', path: `/projects/${c.projectId}/access_tokens` }),
    allowed: 200,
    refused: 401,
  },
  {
    flag: 'manage_group_access_tokens',
    call: (c) => ({ method: 'GET', path: `/groups/${c.group.id}/access_tokens` }),
    allowed: 200,
    refused: 401,
  },
  {
    flag: 'admin_group_member',
    call: (c) => ({
      method: 'POST',
      path: `/groups/${c.group.id}/members`,
      json: { user_id: c.target.user.id, access_level: Guest },
    }),
    allowed: 201,
    refused: 403,
  },
  {
    flag: 'remove_group',
    call: (c) => ({ method: 'DELETE', path: `/groups/${c.group.id}` }),
    allowed: 202,
    refused: 403,
  },
  {
    flag: 'admin_push_rules',
    call: (c) => ({ method: 'GET', path: `/projects/${c.projectId}/push_rule` }),
    allowed: 200,
    refused: 403,
  },
];

describe('what each flag grants', () => {
  it.each(FLAG_CASES)('$flag opens its operation for a Guest holding it, not without', async (row) => {
    const root = await admin();
    const group = await server.factories.group();
    const project = await server.factories.project({
      owner: root,
      namespace: group,
      initialize_with_readme: true,
    });
    const role = (
      await createRole(root.token, `/groups/${group.id}/member_roles`, {
        base_access_level: Guest,
        [row.flag]: true,
      })
    ).body as Json;
    const holder = await server.factories.user();
    const plain = await server.factories.memberOf(group, Guest);
    const added = await server.request('POST', `/groups/${group.id}/members`, {
      token: root.token,
      json: { user_id: holder.user.id, access_level: Guest, member_role_id: role.id },
    });
    expect(added.status).toBe(201);
    const ctx = { group, projectId: project.id, target: await server.factories.user() };

    const { method, path, json } = row.call(ctx);
    const without = await server.request(method, path, { token: plain.token, json });
    expect(without.status, `without ${row.flag}`).toBe(row.refused);
    const granted = await server.request(method, path, { token: holder.token, json });
    expect(granted.status, `with ${row.flag}: ${granted.text}`).toBe(row.allowed);
  });

  it('maps the flags whose families come later to the abilities they will declare', () => {
    expect(Object.keys(MEMBER_ROLE_GRANTS).sort()).toEqual([...MEMBER_ROLE_PERMISSIONS].sort());
    expect(MEMBER_ROLE_GRANTS.admin_merge_request.project).toContain('approve_merge_request');
    expect(MEMBER_ROLE_GRANTS.admin_cicd_variables.project).toContain('admin_cicd_variables');
    expect(MEMBER_ROLE_GRANTS.read_runners.project).toContain('read_runners');
  });

  it('lets a Guest with read_code clone the private repository over git', async () => {
    const root = await admin();
    const group = await server.factories.group();
    const project = await server.factories.project({
      owner: root,
      namespace: group,
      initialize_with_readme: true,
    });
    const role = (
      await createRole(root.token, '/member_roles', { base_access_level: Guest, read_code: true })
    ).body as Json;
    const holder = await server.factories.user();
    const plain = await server.factories.memberOf(project, Guest);
    await server.request('POST', `/projects/${project.id}/members`, {
      token: root.token,
      json: { user_id: holder.user.id, access_level: Guest, member_role_id: role.id },
    });
    const view = await server.request('GET', `/projects/${project.id}`, { token: root.token });
    const fullPath = (view.body as Json).path_with_namespace as string;
    const refs = async (token: string) =>
      fetch(`${server.url}/${fullPath}.git/info/refs?service=git-upload-pack`, {
        headers: { Authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` },
      });
    expect((await refs(holder.token)).status).toBe(200);
    expect((await refs(plain.token)).status).not.toBe(200);
  });
});
