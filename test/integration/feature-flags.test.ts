/**
 * Feature flag user lists (iid from the project's sequence, normalised ids, unique names, search,
 * pagination, refusal to delete a list in use), feature flags with strategies and scopes, and the Unleash
 * client API read by the official `unleash-client` SDK with the project's instance id.
 */
import { startUnleash } from 'unleash-client';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

interface World {
  project: Project;
  developer: TestUser;
  reporter: TestUser;
}

async function world(): Promise<World> {
  const { project } = await server.factories.ownedProjectWithReadme({ visibility: 'private' });
  return {
    project,
    developer: await server.factories.memberOf(project, AccessLevel.Developer),
    reporter: await server.factories.memberOf(project, AccessLevel.Reporter),
  };
}

async function call(user: TestUser, method: string, path: string, json?: unknown): Promise<Json> {
  const res = await server.request(method, path, { token: user.token, json });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body as Json;
}

const lists = (w: World) => `/projects/${w.project.id}/feature_flags_user_lists`;
const flags = (w: World) => `/projects/${w.project.id}/feature_flags`;
const newList = (w: World, name: string, userXids = 'user1') =>
  call(w.developer, 'POST', lists(w), { name, user_xids: userXids });

describe('feature flag user lists', () => {
  it('creates with the next iid, reads, updates and deletes', async () => {
    const w = await world();
    const first = await newList(w, 'first');
    const second = await newList(w, 'second', 'a,b');
    expect(first).toMatchObject({ iid: 1, project_id: w.project.id, name: 'first', user_xids: 'user1' });
    expect(second.iid).toBe(2);
    expect(second.path).toMatch(/\/-\/feature_flags_user_lists\/2$/);
    expect(await call(w.developer, 'GET', `${lists(w)}/2`)).toEqual(second);
    const updated = await call(w.developer, 'PUT', `${lists(w)}/2`, { user_xids: 'c' });
    expect(updated).toMatchObject({ name: 'second', user_xids: 'c' });
    const kept = await call(w.developer, 'PUT', `${lists(w)}/2`, {});
    expect(kept).toMatchObject({ name: 'second', user_xids: 'c' });
    expect((await server.request('DELETE', `${lists(w)}/2`, { token: w.developer.token })).status).toBe(204);
    const gone = await server.request('GET', `${lists(w)}/2`, { token: w.developer.token });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ message: '404 Not found' });
    // The sequence does not reuse a deleted list's iid.
    expect((await newList(w, 'third')).iid).toBe(3);
  });

  it.each([
    [' a , b,,a ', 'a,b'],
    ['x', 'x'],
    ['  ,  ', ''],
    ['1,2,3,2,1', '1,2,3'],
  ])('normalises user_xids %j to %j', async (input, stored) => {
    const w = await world();
    expect((await newList(w, 'list', input)).user_xids).toBe(stored);
  });

  it.each([
    [{ user_xids: 'a' }, { error: 'name is missing' }],
    [{ name: 'n' }, { error: 'user_xids is missing' }],
    [
      { name: 'n', user_xids: 'x'.repeat(257) },
      {
        message: [
          'User xids user_xids must be a string of unique comma separated values each 256 characters or less',
        ],
      },
    ],
  ])('refuses %j', async (json, body) => {
    const w = await world();
    const res = await server.request('POST', lists(w), { token: w.developer.token, json });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(body);
  });

  it('keeps names unique in a project, on create and update', async () => {
    const w = await world();
    await newList(w, 'taken');
    await newList(w, 'other');
    for (const [method, path] of [
      ['POST', lists(w)],
      ['PUT', `${lists(w)}/2`],
    ]) {
      const res = await server.request(method, path, {
        token: w.developer.token,
        json: { name: 'taken', user_xids: 'a' },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: ['Name has already been taken'] });
    }
  });

  it('searches by every word and paginates', async () => {
    const w = await world();
    for (const name of ['test_list', 'list_b', 'test_again']) await newList(w, name);
    const search = async (q: string) =>
      (
        (await call(w.developer, 'GET', `${lists(w)}?search=${encodeURIComponent(q)}`)) as unknown as Json[]
      ).map((l) => l.name);
    expect(await search('test')).toEqual(['test_list', 'test_again']);
    expect(await search('test list')).toEqual(['test_list']);
    expect(await search('')).toHaveLength(3);
    const page = await server.request('GET', `${lists(w)}?per_page=2&page=2`, { token: w.developer.token });
    expect((page.body as Json[]).map((l) => l.name)).toEqual(['test_again']);
    expect(page.headers.get('x-total')).toBe('3');
    expect(page.headers.get('x-prev-page')).toBe('1');
  });

  it('is for Developer and above', async () => {
    const w = await world();
    await newList(w, 'list');
    for (const [method, path] of [
      ['GET', lists(w)],
      ['GET', `${lists(w)}/1`],
      ['POST', lists(w)],
      ['DELETE', `${lists(w)}/1`],
    ]) {
      const res = await server.request(method, path, {
        token: w.reporter.token,
        json: method === 'POST' ? { name: 'x', user_xids: 'y' } : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
  });
});

const userListFlag = (name: string, listId: number, scope = 'production') => ({
  name,
  version: 'new_version_flag',
  strategies: [
    { name: 'gitlabUserList', parameters: {}, user_list_id: listId, scopes: [{ environment_scope: scope }] },
  ],
});

describe('feature flags', () => {
  it('creates a flag with a user list strategy, and the list cannot be deleted while in use', async () => {
    const w = await world();
    const list = await newList(w, 'beta', 'u1,u2');
    const flag = await call(w.developer, 'POST', flags(w), userListFlag('new-checkout', list.id as number));
    expect(flag).toMatchObject({
      name: 'new-checkout',
      active: true,
      version: 'new_version_flag',
      description: null,
      scopes: [],
      strategies: [
        {
          name: 'gitlabUserList',
          parameters: {},
          scopes: [{ environment_scope: 'production' }],
          user_list: { id: list.id, iid: 1, name: 'beta', user_xids: 'u1,u2' },
        },
      ],
    });
    const refused = await server.request('DELETE', `${lists(w)}/1`, { token: w.developer.token });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ message: ['User list is associated with a strategy'] });
    const deleted = await call(w.developer, 'DELETE', `${flags(w)}/new-checkout`);
    expect(deleted.name).toBe('new-checkout');
    expect(
      (await server.request('GET', `${flags(w)}/new-checkout`, { token: w.developer.token })).status,
    ).toBe(404);
    expect((await server.request('DELETE', `${lists(w)}/1`, { token: w.developer.token })).status).toBe(204);
  });

  it.each([
    [{ name: 'x' }, ['Name is too short (minimum is 2 characters)']],
    [
      { name: 'Bad' },
      [
        "Name can contain only lowercase letters, digits, '_' and '-'. Must start with a letter, and cannot end with '-' or '_'",
      ],
    ],
    [
      { name: 'ok-flag', strategies: [{ name: 'nope', parameters: {} }] },
      ['Strategies name strategy name is invalid'],
    ],
    [
      { name: 'ok-flag', strategies: [{ name: 'default', parameters: { a: '1' } }] },
      ['Strategies parameters parameters are invalid'],
    ],
    [
      {
        name: 'ok-flag',
        strategies: [{ name: 'gradualRolloutUserId', parameters: { groupId: 'default', percentage: '101' } }],
      },
      ['Strategies parameters percentage must be a string between 0 and 100 inclusive'],
    ],
    [
      {
        name: 'ok-flag',
        strategies: [
          { name: 'flexibleRollout', parameters: { groupId: 'default', rollout: '50', stickiness: 'nope' } },
        ],
      },
      ['Strategies parameters stickiness parameter must be default, userId, sessionId, or random'],
    ],
    [
      { name: 'ok-flag', strategies: [{ name: 'userWithId', parameters: { userIds: 'a,,b' } }] },
      [
        'Strategies parameters userIds must be a string of unique comma separated values each 256 characters or less',
      ],
    ],
    [
      { name: 'ok-flag', strategies: [{ name: 'gitlabUserList', parameters: {} }] },
      ["Strategies user list can't be blank"],
    ],
  ])('refuses %j', async (json, message) => {
    const w = await world();
    const res = await server.request('POST', flags(w), { token: w.developer.token, json });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual({ message });
    expect(await call(w.developer, 'GET', flags(w))).toEqual([]);
  });

  it('goes with its project, lists in use included', async () => {
    const w = await world();
    const list = await newList(w, 'beta');
    await call(w.developer, 'POST', flags(w), userListFlag('with-list', list.id as number));
    await server.dataSource.query('DELETE FROM projects WHERE id = $1', [w.project.id]);
    const left = (await server.dataSource.query(
      'SELECT (SELECT count(*) FROM feature_flags WHERE project_id = $1) + (SELECT count(*) FROM feature_flag_user_lists WHERE project_id = $1) AS n',
      [w.project.id],
    )) as Array<{ n: string }>;
    expect(Number(left[0].n)).toBe(0);
  });

  it('refuses a user list of another project', async () => {
    const w = await world();
    const other = await world();
    const list = await newList(other, 'theirs');
    const res = await server.request('POST', flags(w), {
      token: w.developer.token,
      json: userListFlag('flag', list.id as number),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: ['Strategies user list must belong to the same project'] });
  });

  it('updates, adds and removes strategies and scopes; lists by scope', async () => {
    const w = await world();
    const created = await call(w.developer, 'POST', flags(w), {
      name: 'rollout',
      strategies: [
        {
          name: 'flexibleRollout',
          parameters: JSON.stringify({ groupId: 'default', rollout: '50', stickiness: 'userId' }),
          scopes: [{ environment_scope: '*' }],
        },
      ],
    });
    const [strategy] = created.strategies as Json[];
    const [scope] = strategy.scopes as Json[];
    const updated = await call(w.developer, 'PUT', `${flags(w)}/rollout`, {
      active: false,
      description: 'half',
      strategies: [
        { id: strategy.id, scopes: [{ id: scope.id, _destroy: true }, { environment_scope: 'review/*' }] },
        { name: 'userWithId', parameters: { userIds: 'a,b' }, scopes: [{ environment_scope: 'production' }] },
      ],
    });
    expect(updated).toMatchObject({ active: false, description: 'half' });
    expect(
      (updated.strategies as Json[]).map((s) => [
        s.name,
        (s.scopes as Json[]).map((c) => c.environment_scope),
      ]),
    ).toEqual([
      ['flexibleRollout', ['review/*']],
      ['userWithId', ['production']],
    ]);
    const removed = await call(w.developer, 'PUT', `${flags(w)}/rollout`, {
      strategies: [{ id: strategy.id, _destroy: true }],
    });
    expect((removed.strategies as Json[]).map((s) => s.name)).toEqual(['userWithId']);
    const unknown = await server.request('PUT', `${flags(w)}/rollout`, {
      token: w.developer.token,
      json: { strategies: [{ id: 2147483647, _destroy: true }] },
    });
    expect(unknown.status).toBe(404);
    await call(w.developer, 'POST', flags(w), { name: 'on-flag' });
    const names = async (scope: string) =>
      ((await call(w.developer, 'GET', `${flags(w)}?scope=${scope}`)) as unknown as Json[]).map(
        (f) => f.name,
      );
    expect(await names('enabled')).toEqual(['on-flag']);
    expect(await names('disabled')).toEqual(['rollout']);
    const taken = await server.request('POST', flags(w), {
      token: w.developer.token,
      json: { name: 'on-flag' },
    });
    expect(taken.body).toEqual({ message: ['Name has already been taken'] });
  });
});

describe('the Unleash client API', () => {
  async function unleashSetup() {
    const w = await world();
    const list = await newList(w, 'beta', 'alice,bob');
    await call(w.developer, 'POST', flags(w), {
      ...userListFlag('beta-feature', list.id as number, 'production'),
      description: 'For beta testers',
    });
    await call(w.developer, 'POST', flags(w), {
      name: 'staging-only',
      strategies: [{ name: 'default', parameters: {}, scopes: [{ environment_scope: 'staging' }] }],
    });
    const client = await call(w.developer, 'GET', `/projects/${w.project.id}/feature_flags_client`);
    return { w, list, client };
  }

  it('shows the instance id once made, the same each time', async () => {
    const { w, client } = await unleashSetup();
    expect(client.instance_id).toMatch(/^glffct-/);
    expect(client.unleash_api_url).toBe(`${server.api}/feature_flags/unleash/${w.project.id}`);
    expect(await call(w.developer, 'GET', `/projects/${w.project.id}/feature_flags_client`)).toEqual(client);
    expect(
      (
        await server.request('GET', `/projects/${w.project.id}/feature_flags_client`, {
          token: w.reporter.token,
        })
      ).status,
    ).toBe(403);
  });

  it('serves the environment’s flags to the instance id, a user list as userWithId', async () => {
    const { w, client } = await unleashSetup();
    const features = (headers: Record<string, string>, path = 'client/features') =>
      server.request('GET', `/feature_flags/unleash/${w.project.id}/${path}`, { headers });
    const id = client.instance_id as string;
    const res = await features({ 'UNLEASH-INSTANCEID': id, 'UNLEASH-APPNAME': 'production' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      version: 1,
      features: [
        {
          name: 'beta-feature',
          description: 'For beta testers',
          enabled: true,
          strategies: [{ name: 'userWithId', parameters: { userIds: 'alice,bob' } }],
        },
      ],
    });
    const staging = await features({ 'UNLEASH-INSTANCEID': id, 'UNLEASH-APPNAME': 'staging' }, 'features');
    expect((staging.body as { features: Json[] }).features.map((f) => f.name)).toEqual(['staging-only']);
    const byQuery = await server.request(
      'GET',
      `/feature_flags/unleash/${w.project.id}/client/features?instance_id=${id}&app_name=staging`,
    );
    expect((byQuery.body as { features: Json[] }).features.map((f) => f.name)).toEqual(['staging-only']);
    expect((await features({ 'UNLEASH-INSTANCEID': id })).body).toEqual({ version: 1, features: [] });
    expect(
      (await features({ 'UNLEASH-INSTANCEID': 'glffct-wrong', 'UNLEASH-APPNAME': 'production' })).status,
    ).toBe(401);
    expect((await features({ 'UNLEASH-APPNAME': 'production' })).status).toBe(401);
    expect(
      (await features({ 'PRIVATE-TOKEN': w.developer.token, 'UNLEASH-APPNAME': 'production' })).status,
    ).toBe(401);
    const other = await world();
    const elsewhere = await server.request(
      'GET',
      `/feature_flags/unleash/${other.project.id}/client/features`,
      {
        headers: { 'UNLEASH-INSTANCEID': id, 'UNLEASH-APPNAME': 'production' },
      },
    );
    expect(elsewhere.status).toBe(401);
    for (const path of ['client/register', 'client/metrics']) {
      const res = await server.request('POST', `/feature_flags/unleash/${w.project.id}/${path}`, {
        headers: { 'UNLEASH-INSTANCEID': id },
        json: { appName: 'production' },
      });
      expect(res.status, path).toBe(200);
    }
  });

  it('answers the official unleash-client SDK per user id, following list changes', async () => {
    const { w, client } = await unleashSetup();
    const sdk = await startUnleash({
      url: client.unleash_api_url as string,
      appName: 'production',
      instanceId: client.instance_id as string,
      refreshInterval: 200,
      metricsInterval: 200,
      disableAutoStart: false,
    });
    try {
      expect(sdk.isEnabled('beta-feature', { userId: 'alice' })).toBe(true);
      expect(sdk.isEnabled('beta-feature', { userId: 'bob' })).toBe(true);
      expect(sdk.isEnabled('beta-feature', { userId: 'mallory' })).toBe(false);
      expect(sdk.isEnabled('staging-only')).toBe(false);
      await call(w.developer, 'PUT', `${lists(w)}/1`, { user_xids: 'mallory' });
      await expect
        .poll(() => sdk.isEnabled('beta-feature', { userId: 'mallory' }), { timeout: 5000 })
        .toBe(true);
      expect(sdk.isEnabled('beta-feature', { userId: 'alice' })).toBe(false);
      await call(w.developer, 'PUT', `${flags(w)}/beta-feature`, { active: false });
      await expect
        .poll(() => sdk.isEnabled('beta-feature', { userId: 'mallory' }), { timeout: 5000 })
        .toBe(false);
    } finally {
      sdk.destroy();
    }
  });
});
