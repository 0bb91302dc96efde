import { describe, expect, it } from 'vitest';
import type { VisibilityName } from '../../src/core/abilities.js';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { send, useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;
const { Guest, Reporter, Developer, Maintainer, Owner } = AccessLevel;

/** user id → access level, from a member list. */
const levels = (body: unknown) =>
  Object.fromEntries((body as Json[]).map((m) => [m.id as number, m.access_level as number]));

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

describe('listing members', () => {
  it('lists direct members, and inherited ones through three group levels at the highest level', async () => {
    const top = await server.factories.group();
    const middle = await server.factories.group({ parent: top });
    const leaf = await server.factories.group({ parent: middle });
    const project = await server.factories.project({ namespace: leaf });
    const reporterAtTop = await server.factories.memberOf(top, Reporter);
    const developerInMiddle = await server.factories.memberOf(middle, Developer);
    const maintainerInLeaf = await server.factories.memberOf(leaf, Maintainer);
    const guestOfProject = await server.factories.memberOf(project, Guest);
    // Guest at the top but Maintainer of the project: the project's own, higher level counts.
    const promoted = await server.factories.memberOf(top, Guest);
    await server.factories.member(project, promoted.user, Maintainer);
    // Owner at the top, Developer in the project: the inherited Owner wins.
    const owner = await server.factories.memberOf(top, Owner);
    await server.factories.member(project, owner.user, Developer);
    const token = maintainerInLeaf.token;

    const direct = await server.request('GET', `/projects/${project.id}/members`, { token });
    expect(direct.status).toBe(200);
    expect(levels(direct.body)).toEqual({
      [guestOfProject.user.id]: Guest,
      [promoted.user.id]: Maintainer,
      [owner.user.id]: Developer,
    });

    const all = await server.request('GET', `/projects/${project.id}/members/all`, { token });
    expect(levels(all.body)).toEqual({
      [reporterAtTop.user.id]: Reporter,
      [developerInMiddle.user.id]: Developer,
      [maintainerInLeaf.user.id]: Maintainer,
      [guestOfProject.user.id]: Guest,
      [promoted.user.id]: Maintainer,
      [owner.user.id]: Owner,
    });
    expect(all.headers.get('x-total')).toBe('6');

    const leafAll = await server.request('GET', `/groups/${leaf.id}/members/all`, { token });
    expect(levels(leafAll.body)).toEqual({
      [reporterAtTop.user.id]: Reporter,
      [developerInMiddle.user.id]: Developer,
      [maintainerInLeaf.user.id]: Maintainer,
      [promoted.user.id]: Guest,
      [owner.user.id]: Owner,
    });
    const leafDirect = await server.request('GET', `/groups/${encodeURIComponent(leaf.fullPath)}/members`, {
      token,
    });
    expect(levels(leafDirect.body)).toEqual({ [maintainerInLeaf.user.id]: Maintainer });

    const one = await server.request('GET', `/projects/${project.id}/members/all/${reporterAtTop.user.id}`, {
      token,
    });
    expect(one.body).toMatchObject({ id: reporterAtTop.user.id, access_level: Reporter });
    const inherited = await server.request('GET', `/groups/${leaf.id}/members/all/${owner.user.id}`, {
      token,
    });
    expect(inherited.body).toMatchObject({ id: owner.user.id, access_level: Owner });
    const notDirect = await server.request(
      'GET',
      `/projects/${project.id}/members/${reporterAtTop.user.id}`,
      {
        token,
      },
    );
    expect(notDirect.status).toBe(404);
    expect(notDirect.body).toEqual({ message: '404 Member Not Found' });
    const outsider = await server.factories.user();
    for (const path of [
      `/projects/${project.id}/members/all/${outsider.user.id}`,
      `/groups/${leaf.id}/members/${outsider.user.id}`,
      `/groups/${leaf.id}/members/all/${outsider.user.id}`,
    ]) {
      const response = await server.request('GET', path, { token });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: '404 Member Not Found' });
    }
  });

  it('shows the member fields, the creator and, to administrators only, the email', async () => {
    const group = await server.factories.group({ visibility: 'public' });
    const owner = await server.factories.memberOf(group, Owner);
    const ada = await server.factories.user({ name: 'Ada Lovelace' });
    const added = await server.request('POST', `/groups/${group.id}/members`, {
      token: owner.token,
      json: { user_id: ada.user.id, access_level: Developer, expires_at: '2099-12-31' },
    });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      id: ada.user.id,
      username: ada.user.username,
      name: 'Ada Lovelace',
      state: 'active',
      locked: false,
      avatar_url: null,
      web_url: `${server.url}/${ada.user.username}`,
      access_level: Developer,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      created_by: expect.objectContaining({ id: owner.user.id, username: owner.user.username }),
      expires_at: '2099-12-31',
      membership_state: 'active',
    });
    const admin = await server.factories.user({ admin: true });
    const asAdmin = await server.request('GET', `/groups/${group.id}/members/${ada.user.id}`, {
      token: admin.token,
    });
    expect(asAdmin.body).toMatchObject({ email: ada.user.email });
    const anonymous = await server.request('GET', `/groups/${group.id}/members/${ada.user.id}`);
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).not.toHaveProperty('email');
    // Seeded without a creator: no created_by at all.
    const seeded = await server.request('GET', `/groups/${group.id}/members/${owner.user.id}`);
    expect(seeded.body).not.toHaveProperty('created_by');
  });

  it.each([
    ['public', undefined, 200],
    ['private', undefined, 404],
    ['private', 'outsider', 404],
    ['private', 'member', 200],
  ] as Array<[VisibilityName, string | undefined, number]>)(
    'reads a %s project’s members as %s: %s',
    async (visibility, who, status) => {
      const group = await server.factories.group({ visibility: 'public' });
      const project = await server.factories.project({ namespace: group, visibility });
      const member = await server.factories.memberOf(project, Guest);
      const token =
        who === 'member'
          ? member.token
          : who === 'outsider'
            ? (await server.factories.user()).token
            : undefined;
      for (const path of ['members', 'members/all', `members/${member.user.id}`]) {
        const response = await server.request('GET', `/projects/${project.id}/${path}`, { token });
        expect(response.status).toBe(status);
        if (status === 404) expect(response.body).toEqual({ message: '404 Project Not Found' });
      }
    },
  );

  it('hides the members of a private group from outsiders', async () => {
    const group = await server.factories.group({ visibility: 'private' });
    await server.factories.memberOf(group, Owner);
    const outsider = await server.factories.user();
    for (const token of [undefined, outsider.token]) {
      const response = await server.request('GET', `/groups/${group.id}/members/all`, { token });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: '404 Group Not Found' });
    }
  });

  it('filters by query, user_ids, skip_users and state', async () => {
    const group = await server.factories.group({ visibility: 'public' });
    const tag = Math.random().toString(36).slice(2, 8);
    const ada = await server.factories.user({ name: `Ada ${tag}` });
    const bob = await server.factories.user({ username: `bob-${tag}` });
    const eve = await server.factories.user();
    for (const user of [ada, bob, eve]) await server.factories.member(group, user.user, Developer);
    const ids = async (query: string, path = 'members') =>
      ((await server.request('GET', `/groups/${group.id}/${path}?${query}`)).body as Json[]).map((m) => m.id);

    expect(await ids(`query=ada%20${tag.toUpperCase()}`)).toEqual([ada.user.id]);
    expect(await ids(`query=BOB-${tag}`, 'members/all')).toEqual([bob.user.id]);
    expect(await ids('query=100%25')).toEqual([]);
    expect(await ids(`user_ids[]=${ada.user.id}&user_ids[]=${eve.user.id}`)).toEqual([
      ada.user.id,
      eve.user.id,
    ]);
    expect(await ids(`user_ids=${bob.user.id},${eve.user.id}`, 'members/all')).toEqual([
      bob.user.id,
      eve.user.id,
    ]);
    expect(await ids(`skip_users[]=${ada.user.id}`)).toEqual([bob.user.id, eve.user.id]);
    expect(await ids(`skip_users=${ada.user.id},${bob.user.id}`, 'members/all')).toEqual([eve.user.id]);
    expect(await ids('state=active&show_seat_info=true')).toHaveLength(3);
    expect(await ids('state=awaiting')).toEqual([]);

    const bad = await server.request('GET', `/groups/${group.id}/members?state=pending`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'state does not have a valid value' });
    const badIds = await server.request('GET', `/groups/${group.id}/members?user_ids=one`);
    expect(badIds.status).toBe(400);
  });

  it('paginates with every header, following rel="next"', async () => {
    const group = await server.factories.group({ visibility: 'public' });
    const members: number[] = [];
    for (let i = 0; i < 5; i++) members.push((await server.factories.memberOf(group, Reporter)).user.id);

    const second = await server.request('GET', `/groups/${group.id}/members?per_page=2&page=2`);
    expect(second.headers.get('x-total')).toBe('5');
    expect(second.headers.get('x-total-pages')).toBe('3');
    expect(second.headers.get('x-page')).toBe('2');
    expect(second.headers.get('x-per-page')).toBe('2');
    expect(second.headers.get('x-next-page')).toBe('3');
    expect(second.headers.get('x-prev-page')).toBe('1');
    expect(second.headers.get('link')).toContain(
      `<${server.api}/groups/${group.id}/members?page=3&per_page=2>; rel="next"`,
    );

    const seen: unknown[] = [];
    let url: string | undefined = `${server.api}/groups/${group.id}/members/all?per_page=2`;
    while (url) {
      const response = await send(url, 'GET');
      seen.push(...(response.body as Json[]).map((m) => m.id));
      url = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    }
    expect(seen).toEqual(members);
    const beyond = await server.request('GET', `/groups/${group.id}/members?per_page=2&page=9`);
    expect(beyond.body).toEqual([]);
    expect(beyond.headers.get('x-total')).toBe('5');
  });
});

describe('members of shared groups', () => {
  async function sharedWorld() {
    const home = await server.factories.group({ visibility: 'public' });
    const project = await server.factories.project({ namespace: home, visibility: 'public' });
    const maintainer = await server.factories.memberOf(project, Maintainer);
    const parent = await server.factories.group({ visibility: 'private' });
    const team = await server.factories.group({ visibility: 'private', parent });
    const teamMaintainer = await server.factories.memberOf(team, Maintainer);
    const teamGuest = await server.factories.memberOf(team, Guest);
    const parentOwner = await server.factories.memberOf(parent, Owner);
    // A direct Reporter of the project who is also Maintainer in the team: the share gives 30.
    const both = await server.factories.memberOf(project, Reporter);
    await server.factories.member(team, both.user, Maintainer);
    return { home, project, maintainer, parent, team, teamMaintainer, teamGuest, parentOwner, both };
  }

  it('caps members of the shared group at the share level and collapses duplicates', async () => {
    const w = await sharedWorld();
    const shared = await server.request('POST', `/projects/${w.project.id}/share`, {
      token: w.maintainer.token,
      json: { group_id: w.team.id, group_access: Developer },
    });
    // Sharing needs membership of the group: the team's owner shares.
    expect(shared.status).toBe(404);
    expect(shared.body).toEqual({ message: '404 Group Not Found' });
    await server.factories.member(w.project, w.parentOwner.user, Maintainer);
    const created = await server.request('POST', `/projects/${w.project.id}/share`, {
      token: w.parentOwner.token,
      json: { group_id: w.team.id, group_access: Developer, expires_at: null },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      project_id: w.project.id,
      group_id: w.team.id,
      group_access: Developer,
      expires_at: null,
    });

    const all = await server.request('GET', `/projects/${w.project.id}/members/all`, {
      token: w.maintainer.token,
    });
    expect(levels(all.body)).toEqual({
      [w.maintainer.user.id]: Maintainer,
      [w.teamMaintainer.user.id]: Developer,
      [w.teamGuest.user.id]: Guest,
      [w.parentOwner.user.id]: Maintainer,
      [w.both.user.id]: Developer,
    });
    const one = await server.request(
      'GET',
      `/projects/${w.project.id}/members/all/${w.teamMaintainer.user.id}`,
      {
        token: w.maintainer.token,
      },
    );
    expect(one.body).toMatchObject({ access_level: Developer });
    // The project's members may see the shared private group's members, but not who added them.
    expect(one.body).not.toHaveProperty('created_by');
    const direct = await server.request('GET', `/projects/${w.project.id}/members`, {
      token: w.maintainer.token,
    });
    expect(Object.keys(levels(direct.body))).toHaveLength(3);
  });

  it('lists members of a private shared group only to those who may know it', async () => {
    const w = await sharedWorld();
    await server.factories.share(w.project, w.team, Developer);
    const ids = async (token?: string) =>
      Object.keys(
        levels((await server.request('GET', `/projects/${w.project.id}/members/all`, { token })).body),
      )
        .map(Number)
        .sort();
    const withoutShare = [w.maintainer.user.id, w.both.user.id].sort();
    const withShare = [
      ...withoutShare,
      w.teamMaintainer.user.id,
      w.teamGuest.user.id,
      w.parentOwner.user.id,
    ].sort();
    expect(await ids()).toEqual(withoutShare);
    expect(await ids((await server.factories.user()).token)).toEqual(withoutShare);
    expect(await ids(w.teamGuest.token)).toEqual(withShare);
    expect(await ids(w.maintainer.token)).toEqual(withShare);
    expect(await ids((await server.factories.user({ admin: true })).token)).toEqual(withShare);
  });

  it('ignores expired shares', async () => {
    const w = await sharedWorld();
    await server.factories.share(w.project, w.team, Developer, '2020-01-01');
    const all = await server.request('GET', `/projects/${w.project.id}/members/all`, {
      token: w.maintainer.token,
    });
    expect(Object.keys(levels(all.body)).map(Number).sort()).toEqual(
      [w.maintainer.user.id, w.both.user.id].sort(),
    );
  });
});

describe('permissions', () => {
  const roles = ['guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;
  type Role = (typeof roles)[number];
  const ROLE_LEVEL: Record<Role, number> = {
    guest: Guest,
    reporter: Reporter,
    developer: Developer,
    maintainer: Maintainer,
    owner: Owner,
    admin: 0,
  };

  async function callerOf(source: Project | Namespace, role: Role): Promise<TestUser> {
    if (role === 'admin') return server.factories.user({ admin: true });
    return server.factories.memberOf(source, ROLE_LEVEL[role]);
  }

  async function tryAll(base: string, token: string, target: TestUser, newcomer: TestUser) {
    const add = await server.request('POST', `${base}/members`, {
      token,
      json: { user_id: newcomer.user.id, access_level: Reporter },
    });
    const update = await server.request('PUT', `${base}/members/${target.user.id}`, {
      token,
      json: { access_level: Maintainer },
    });
    const remove = await server.request('DELETE', `${base}/members/${target.user.id}`, { token });
    return [add.status, update.status, remove.status];
  }

  it.each(roles.map((role) => [role, ['maintainer', 'owner', 'admin'].includes(role)] as const))(
    'project members: %s may manage=%s',
    async (role, allowed) => {
      const group = await server.factories.group();
      const project = await server.factories.project({ namespace: group });
      const caller = await callerOf(project, role);
      const target = await server.factories.memberOf(project, Developer);
      const newcomer = await server.factories.user();
      const statuses = await tryAll(`/projects/${project.id}`, caller.token, target, newcomer);
      expect(statuses).toEqual(allowed ? [201, 200, 204] : [403, 403, 403]);
    },
  );

  it.each(roles.map((role) => [role, ['owner', 'admin'].includes(role)] as const))(
    'group members: %s may manage=%s',
    async (role, allowed) => {
      const group = await server.factories.group();
      await server.factories.memberOf(group, Owner);
      const caller = await callerOf(group, role);
      const target = await server.factories.memberOf(group, Developer);
      const newcomer = await server.factories.user();
      const statuses = await tryAll(`/groups/${group.id}`, caller.token, target, newcomer);
      expect(statuses).toEqual(allowed ? [201, 200, 204] : [403, 403, 403]);
    },
  );

  it('reads with a read_api token, but writes only with api', async () => {
    const group = await server.factories.group();
    const owner = await server.factories.memberOf(group, Owner);
    const readOnly = await server.factories.token(owner.user, ['read_api']);
    expect((await server.request('GET', `/groups/${group.id}/members`, { token: readOnly })).status).toBe(
      200,
    );
    const write = await server.request('POST', `/groups/${group.id}/members`, {
      token: readOnly,
      json: { user_id: (await server.factories.user()).user.id, access_level: Guest },
    });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ error: 'insufficient_scope', scope: 'api' });
  });

  it('takes the role inherited from a group into account', async () => {
    const group = await server.factories.group();
    const project = await server.factories.project({ namespace: group });
    const groupMaintainer = await server.factories.memberOf(group, Maintainer);
    const newcomer = await server.factories.user();
    const added = await server.request('POST', `/projects/${project.id}/members`, {
      token: groupMaintainer.token,
      json: { user_id: newcomer.user.id, access_level: Guest },
    });
    expect(added.status).toBe(201);
    const groupAdd = await server.request('POST', `/groups/${group.id}/members`, {
      token: groupMaintainer.token,
      json: { user_id: newcomer.user.id, access_level: Guest },
    });
    expect(groupAdd.status).toBe(403);
    expect(groupAdd.body).toEqual({ message: '403 Forbidden' });
  });

  it('lets only Owners give, change or take the Owner role in a project', async () => {
    const group = await server.factories.group();
    const project = await server.factories.project({ namespace: group });
    const maintainer = await server.factories.memberOf(project, Maintainer);
    const owner = await server.factories.memberOf(project, Owner);
    const otherOwner = await server.factories.memberOf(project, Owner);
    const developer = await server.factories.memberOf(project, Developer);
    const newcomer = await server.factories.user();
    const base = `/projects/${project.id}/members`;

    const asMaintainer = [
      await server.request('POST', base, {
        token: maintainer.token,
        json: { user_id: newcomer.user.id, access_level: Owner },
      }),
      await server.request('PUT', `${base}/${developer.user.id}`, {
        token: maintainer.token,
        json: { access_level: Owner },
      }),
      await server.request('PUT', `${base}/${otherOwner.user.id}`, {
        token: maintainer.token,
        json: { access_level: Developer },
      }),
      await server.request('DELETE', `${base}/${otherOwner.user.id}`, { token: maintainer.token }),
    ];
    // Re-adding an Owner in a list would change their membership: refused as well.
    asMaintainer.push(
      await server.request('POST', base, {
        token: maintainer.token,
        json: { user_id: `${newcomer.user.id},${otherOwner.user.id}`, access_level: Developer },
      }),
    );
    expect(asMaintainer.map((r) => r.status)).toEqual([403, 403, 403, 403, 403]);
    expect((await server.request('GET', `${base}/${newcomer.user.id}`, { token: owner.token })).status).toBe(
      404,
    );

    expect(
      (
        await server.request('POST', base, {
          token: owner.token,
          json: { user_id: newcomer.user.id, access_level: Owner },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await server.request('PUT', `${base}/${developer.user.id}`, {
          token: owner.token,
          json: { access_level: Owner },
        })
      ).body,
    ).toMatchObject({ access_level: Owner });
    expect(
      (await server.request('DELETE', `${base}/${otherOwner.user.id}`, { token: owner.token })).status,
    ).toBe(204);
  });

  it('never removes or demotes the last Owner of a group', async () => {
    const top = await server.factories.group();
    const owner = await server.factories.memberOf(top, Owner);
    const admin = await server.factories.user({ admin: true });
    const base = `/groups/${top.id}/members/${owner.user.id}`;
    for (const [method, json] of [
      ['PUT', { access_level: Maintainer }],
      ['PUT', { access_level: Owner, expires_at: tomorrow() }],
      ['DELETE', undefined],
    ] as const) {
      for (const token of [owner.token, admin.token]) {
        const response = await server.request(method, base, { token, json });
        expect(response.status).toBe(403);
        expect(response.body).toEqual({ message: '403 Forbidden' });
      }
    }
    // A blocked or bot Owner does not count as another Owner.
    const blocked = await server.factories.user({ state: 'blocked' });
    await server.factories.member(top, blocked.user, Owner);
    expect((await server.request('DELETE', base, { token: owner.token })).status).toBe(403);

    const second = await server.factories.memberOf(top, Owner);
    expect(
      (await server.request('PUT', base, { token: owner.token, json: { access_level: Developer } })).status,
    ).toBe(200);
    // Now `second` is the last Owner, even for themselves.
    const leave = await server.request('DELETE', `/groups/${top.id}/members/${second.user.id}`, {
      token: second.token,
    });
    expect(leave.status).toBe(403);

    // A subgroup's own Owner may go: the parent's Owner remains.
    const sub = await server.factories.group({ parent: top });
    const subOwner = await server.factories.memberOf(sub, Owner);
    const subLeave = await server.request('DELETE', `/groups/${sub.id}/members/${subOwner.user.id}`, {
      token: subOwner.token,
    });
    expect(subLeave.status).toBe(204);
  });

  it('lets members remove themselves', async () => {
    const group = await server.factories.group();
    await server.factories.memberOf(group, Owner);
    const project = await server.factories.project({ namespace: group });
    const developer = await server.factories.memberOf(project, Developer);
    const groupGuest = await server.factories.memberOf(group, Guest);
    expect(
      (
        await server.request('DELETE', `/projects/${project.id}/members/${developer.user.id}`, {
          token: developer.token,
        })
      ).status,
    ).toBe(204);
    expect(
      (
        await server.request('DELETE', `/groups/${group.id}/members/${groupGuest.user.id}`, {
          token: groupGuest.token,
        })
      ).status,
    ).toBe(204);
    const gone = await server.request('GET', `/projects/${project.id}/members/${developer.user.id}`, {
      token: groupGuest.token,
    });
    expect(gone.status).toBe(404);
    const again = await server.request('DELETE', `/projects/${project.id}/members/${developer.user.id}`, {
      token: (await server.factories.user({ admin: true })).token,
    });
    expect(again.body).toEqual({ message: '404 Member Not Found' });
  });

  it('keeps the holder of a personal namespace in their project', async () => {
    const alice = await server.factories.user();
    const project = await server.factories.project({ owner: alice });
    const admin = await server.factories.user({ admin: true });
    for (const token of [alice.token, admin.token]) {
      const base = `/projects/${project.id}/members/${alice.user.id}`;
      expect((await server.request('DELETE', base, { token })).status).toBe(403);
      expect((await server.request('PUT', base, { token, json: { access_level: Developer } })).status).toBe(
        403,
      );
    }
  });

  it('removes a group member from the subgroups and projects inside, unless told not to', async () => {
    const group = await server.factories.group();
    const owner = await server.factories.memberOf(group, Owner);
    const sub = await server.factories.group({ parent: group });
    const project = await server.factories.project({ namespace: sub });
    const elsewhere = await server.factories.project({ namespace: await server.factories.group() });
    const check = async (user: TestUser) => [
      (await server.request('GET', `/groups/${sub.id}/members/${user.user.id}`, { token: owner.token }))
        .status,
      (await server.request('GET', `/projects/${project.id}/members/${user.user.id}`, { token: owner.token }))
        .status,
    ];
    const bob = await server.factories.memberOf(group, Developer);
    const carol = await server.factories.memberOf(group, Developer);
    for (const user of [bob, carol]) {
      await server.factories.member(sub, user.user, Maintainer);
      await server.factories.member(project, user.user, Maintainer);
      await server.factories.member(elsewhere, user.user, Guest);
    }
    await server.request('DELETE', `/groups/${group.id}/members/${bob.user.id}`, { token: owner.token });
    expect(await check(bob)).toEqual([404, 404]);
    await server.request('DELETE', `/groups/${group.id}/members/${carol.user.id}?skip_subresources=true`, {
      token: owner.token,
    });
    expect(await check(carol)).toEqual([200, 200]);
    const kept = await server.factories.user({ admin: true });
    expect(
      (await server.request('GET', `/projects/${elsewhere.id}/members/${bob.user.id}`, { token: kept.token }))
        .status,
    ).toBe(200);
  });

  it('refuses to change or remove access-token bots through the members API', async () => {
    const group = await server.factories.group();
    const project = await server.factories.project({ namespace: group });
    const owner = await server.factories.memberOf(project, Owner);
    const bot = await server.services.users.createUser({
      username: `project_${project.id}_bot_${Math.random().toString(36).slice(2, 8)}`,
      name: 'Bot',
      email: `bot-${project.id}@noreply.example.com`,
      bot: true,
      userType: 'project_bot',
    });
    await server.factories.member(project, bot, Maintainer);
    const base = `/projects/${project.id}/members/${bot.id}`;
    expect(
      (await server.request('PUT', base, { token: owner.token, json: { access_level: Developer } })).status,
    ).toBe(403);
    expect((await server.request('DELETE', base, { token: owner.token })).status).toBe(403);
    const elsewhere = await server.request('POST', `/groups/${group.id}/members`, {
      token: (await server.factories.user({ admin: true })).token,
      json: { user_id: bot.id, access_level: Guest },
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body).toEqual({
      message: { user_id: ['project bots cannot be added to other groups / projects'] },
    });
  });
});

describe('expiry', () => {
  it('gives an expired membership no access, and lets the user be added again', async () => {
    const group = await server.factories.group();
    const project = await server.factories.project({ namespace: group });
    const owner = await server.factories.memberOf(group, Owner);
    const bob = await server.factories.user();
    await server.factories.member(project, bob.user, Developer, '2020-01-01');
    const seen = await server.request('GET', `/projects/${project.id}`, { token: bob.token });
    expect(seen.status).toBe(404);
    expect(seen.body).toEqual({ message: '404 Project Not Found' });
    expect(
      (await server.request('GET', `/projects/${project.id}/members/${bob.user.id}`, { token: owner.token }))
        .status,
    ).toBe(404);
    const list = await server.request('GET', `/projects/${project.id}/members/all`, { token: owner.token });
    expect(levels(list.body)).not.toHaveProperty(String(bob.user.id));

    const again = await server.request('POST', `/projects/${project.id}/members`, {
      token: owner.token,
      json: { user_id: bob.user.id, access_level: Reporter, expires_at: tomorrow() },
    });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ access_level: Reporter, expires_at: tomorrow() });
    expect((await server.request('GET', `/projects/${project.id}`, { token: bob.token })).status).toBe(200);
  });

  it('refuses an expiry in the past and removes one with null', async () => {
    const group = await server.factories.group();
    const owner = await server.factories.memberOf(group, Owner);
    const bob = await server.factories.user();
    const past = await server.request('POST', `/groups/${group.id}/members`, {
      token: owner.token,
      json: { user_id: bob.user.id, access_level: Guest, expires_at: '2020-01-01' },
    });
    expect(past.status).toBe(400);
    expect(past.body).toEqual({ message: { expires_at: ['cannot be a date in the past'] } });
    await server.request('POST', `/groups/${group.id}/members`, {
      token: owner.token,
      form: { user_id: String(bob.user.id), access_level: '10', expires_at: tomorrow() },
    });
    const kept = await server.request('PUT', `/groups/${group.id}/members/${bob.user.id}`, {
      token: owner.token,
      json: { access_level: Reporter },
    });
    expect(kept.body).toMatchObject({ access_level: Reporter, expires_at: tomorrow() });
    const cleared = await server.request('PUT', `/groups/${group.id}/members/${bob.user.id}`, {
      token: owner.token,
      json: { access_level: Reporter, expires_at: null },
    });
    expect(cleared.body).toMatchObject({ expires_at: null });
  });
});

describe('adding: bad input and special cases', () => {
  async function setup() {
    const top = await server.factories.group({ path: `top-${Math.random().toString(36).slice(2, 8)}` });
    const group = await server.factories.group({ parent: top });
    const owner = await server.factories.memberOf(group, Owner);
    return { top, group, owner, base: `/groups/${group.id}/members` };
  }

  it.each([
    [{ user_id: 1 }, { error: 'access_level is missing' }],
    [
      { access_level: 30 },
      { error: 'user_id, username are missing, at least one parameter must be provided' },
    ],
    [
      { access_level: 30, user_id: 1, username: 'root' },
      { error: 'user_id, username are mutually exclusive' },
    ],
    [{ access_level: 'high', user_id: 1 }, { error: 'access_level is invalid' }],
    [{ access_level: 30, user_id: 1, expires_at: 'soon' }, { error: 'expires_at is invalid' }],
  ])('answers 400 to %j', async (json, body) => {
    const { owner, base } = await setup();
    const response = await server.request('POST', base, { token: owner.token, json });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(body);
  });

  it('answers 404 for unknown users and 409 for existing members', async () => {
    const { owner, base } = await setup();
    const unknown = await server.request('POST', base, {
      token: owner.token,
      json: { user_id: 999999, access_level: Guest },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 User Not Found' });
    const noName = await server.request('POST', base, {
      token: owner.token,
      json: { username: 'nobody-here', access_level: Guest },
    });
    expect(noName.body).toEqual({ message: '404 User Not Found' });
    const again = await server.request('POST', base, {
      token: owner.token,
      json: { user_id: owner.user.id, access_level: Guest },
    });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: 'Member already exists' });
  });

  it('validates the level: valid values, and not below an inherited membership', async () => {
    const { top, group, owner, base } = await setup();
    const invalid = await server.request('POST', base, {
      token: owner.token,
      json: { user_id: (await server.factories.user()).user.id, access_level: 35 },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ message: { access_level: ['is not included in the list'] } });

    const dev = await server.factories.memberOf(top, Developer);
    const lower = await server.request('POST', base, {
      token: owner.token,
      json: { user_id: dev.user.id, access_level: Reporter },
    });
    expect(lower.status).toBe(400);
    expect(lower.body).toEqual({
      message: {
        access_level: [
          `should be greater than or equal to Developer inherited membership from group ${top.name}`,
        ],
      },
    });
    const equal = await server.request('POST', base, {
      token: owner.token,
      json: { user_id: dev.user.id, access_level: Developer },
    });
    expect(equal.status).toBe(201);
    const demote = await server.request('PUT', `${base}/${dev.user.id}`, {
      token: owner.token,
      json: { access_level: Guest },
    });
    expect(demote.status).toBe(400);

    const project = await server.factories.project({ namespace: group });
    const projectLower = await server.request('POST', `/projects/${project.id}/members`, {
      token: owner.token,
      json: { user_id: dev.user.id, access_level: Guest },
    });
    expect(projectLower.body).toEqual({
      message: {
        access_level: [
          `should be greater than or equal to Developer inherited membership from group ${group.name}`,
        ],
      },
    });
  });

  it('adds by username, as a form, and blocked users too', async () => {
    const { owner, base } = await setup();
    const ada = await server.factories.user();
    const byName = await server.request('POST', base, {
      token: owner.token,
      form: { username: ada.user.username.toUpperCase(), access_level: '20' },
    });
    expect(byName.status).toBe(201);
    expect(byName.body).toMatchObject({ id: ada.user.id, access_level: Reporter });
    const blocked = await server.factories.user({ state: 'blocked' });
    const added = await server.request('POST', `${base}?user_id=${blocked.user.id}&access_level=10`, {
      token: owner.token,
      json: {},
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ state: 'blocked', access_level: Guest });
  });

  it('adds a comma-separated list, naming the users it could not add', async () => {
    const { top, owner, base } = await setup();
    const [a, b, c] = [
      await server.factories.user(),
      await server.factories.user(),
      await server.factories.user(),
    ];
    const ok = await server.request('POST', base, {
      token: owner.token,
      json: { user_id: `${a.user.id},${b.user.id},999999`, access_level: Developer },
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ status: 'success' });
    const list = await server.request('GET', base, { token: owner.token });
    expect(levels(list.body)).toMatchObject({ [a.user.id]: Developer, [b.user.id]: Developer });

    await server.factories.member(top, c.user, Maintainer);
    const mixed = await server.request('POST', base, {
      token: owner.token,
      json: { username: `${a.user.username},${c.user.username}`, access_level: Reporter },
    });
    expect(mixed.body).toEqual({
      status: 'error',
      message: `${c.user.username}: Access level should be greater than or equal to Maintainer inherited membership from group ${top.name}`,
    });
    // The valid part of the list went through: a is now a Reporter.
    expect(levels((await server.request('GET', base, { token: owner.token })).body)[a.user.id]).toBe(
      Reporter,
    );

    const none = await server.request('POST', base, {
      token: owner.token,
      json: { user_id: '999998,999999', access_level: Reporter },
    });
    expect(none.body).toEqual({ status: 'error', message: 'No users specified.' });
  });
});

describe('sharing projects with groups', () => {
  async function world(settings: Record<string, unknown> = {}) {
    const home = await server.factories.group();
    if (Object.keys(settings).length)
      await server.dataSource.query('UPDATE namespaces SET settings = $2 WHERE id = $1', [
        home.id,
        JSON.stringify(settings),
      ]);
    const sub = await server.factories.group({ parent: home });
    const project = await server.factories.project({ namespace: sub });
    const team = await server.factories.group();
    const maintainer = await server.factories.memberOf(project, Maintainer);
    await server.factories.member(team, maintainer.user, Reporter);
    const teamDeveloper = await server.factories.memberOf(team, Developer);
    return { home, sub, project, team, maintainer, teamDeveloper };
  }

  it('gives access to the group’s members, and takes it back on unshare', async () => {
    const w = await world();
    const see = async () =>
      (await server.request('GET', `/projects/${w.project.id}`, { token: w.teamDeveloper.token })).status;
    expect(await see()).toBe(404);
    const shared = await server.request('POST', `/projects/${w.project.id}/share`, {
      token: w.maintainer.token,
      form: { group_id: String(w.team.id), group_access: '20', expires_at: tomorrow() },
    });
    expect(shared.status).toBe(201);
    expect(shared.body).toMatchObject({ group_access: Reporter, expires_at: tomorrow() });
    expect(await see()).toBe(200);
    const member = await server.request(
      'GET',
      `/projects/${w.project.id}/members/all/${w.teamDeveloper.user.id}`,
      {
        token: w.maintainer.token,
      },
    );
    expect(member.body).toMatchObject({ access_level: Reporter, expires_at: tomorrow() });

    const again = await server.request('POST', `/projects/${w.project.id}/share`, {
      token: w.maintainer.token,
      json: { group_id: w.team.id, group_access: Developer },
    });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: 'Project already shared with this group' });

    const removed = await server.request('DELETE', `/projects/${w.project.id}/share/${w.team.id}`, {
      token: w.maintainer.token,
    });
    expect(removed.status).toBe(204);
    expect(await see()).toBe(404);
    const missing = await server.request('DELETE', `/projects/${w.project.id}/share/${w.team.id}`, {
      token: w.maintainer.token,
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Group Link Not Found' });
  });

  it('refuses what GitLab refuses', async () => {
    const w = await world();
    const share = (token: string, json: Json, project = w.project) =>
      server.request('POST', `/projects/${project.id}/share`, { token, json });
    const developer = await server.factories.memberOf(w.project, Developer);
    await server.factories.member(w.team, developer.user, Developer);
    const cases: Array<[string, Json, number, unknown]> = [
      [developer.token, { group_id: w.team.id, group_access: Guest }, 403, { message: '403 Forbidden' }],
      [w.maintainer.token, { group_id: w.team.id, group_access: Owner }, 403, { message: '403 Forbidden' }],
      [
        w.maintainer.token,
        { group_id: w.team.id, group_access: 35 },
        400,
        { error: 'group_access does not have a valid value' },
      ],
      [w.maintainer.token, { group_access: Guest }, 400, { error: 'group_id is missing' }],
      [
        w.maintainer.token,
        { group_id: 999999, group_access: Guest },
        404,
        { message: '404 Group Not Found' },
      ],
      [
        w.maintainer.token,
        { group_id: (await server.factories.group({ visibility: 'public' })).id, group_access: Guest },
        404,
        { message: '404 Group Not Found' },
      ],
    ];
    for (const [token, json, status, body] of cases) {
      const response = await share(token, json);
      expect({ json, status: response.status, body: response.body }).toEqual({ json, status, body });
    }
    const admin = await server.factories.user({ admin: true });
    const ownGroup = await share(admin.token, { group_id: w.home.id, group_access: Guest });
    expect(ownGroup.status).toBe(409);
    expect(ownGroup.body).toEqual({
      message: 'Project cannot be shared with the group it is in or one of its ancestors.',
    });
    expect((await share(admin.token, { group_id: w.team.id, group_access: Owner })).status).toBe(201);
    const unshare = await server.request('DELETE', `/projects/${w.project.id}/share/${w.team.id}`, {
      token: w.maintainer.token,
    });
    expect(unshare.status).toBe(403);
  });

  it('stays inside the hierarchy when the root group asks for it', async () => {
    const w = await world({ prevent_sharing_groups_outside_hierarchy: true });
    const outside = await server.request('POST', `/projects/${w.project.id}/share`, {
      token: w.maintainer.token,
      json: { group_id: w.team.id, group_access: Guest },
    });
    expect(outside.status).toBe(404);
    expect(outside.body).toEqual({ message: '404 Group Not Found' });
    const inside = await server.factories.group({ parent: w.home });
    await server.factories.member(inside, w.maintainer.user, Guest);
    const shared = await server.request('POST', `/projects/${w.project.id}/share`, {
      token: w.maintainer.token,
      json: { group_id: inside.id, group_access: Guest },
    });
    expect(shared.status).toBe(201);
  });

  it('is refused when a group above the project locks sharing', async () => {
    const w = await world({ share_with_group_lock: true });
    const response = await server.request('POST', `/projects/${w.project.id}/share`, {
      token: w.maintainer.token,
      json: { group_id: w.team.id, group_access: Guest },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ message: 'The project sharing with group is disabled' });
  });
});
