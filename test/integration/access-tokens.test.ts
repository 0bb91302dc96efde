import { describe, expect, it } from 'vitest';
import { addDays, utcToday } from '../../src/access_tokens/token-rules.js';
import type { VisibilityName } from '../../src/core/abilities.js';
import { Member } from '../../src/members/member.entity.js';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Namespace } from '../../src/namespaces/namespace.entity.js';
import type { Project } from '../../src/projects/project.entity.js';
import { PersonalAccessToken } from '../../src/users/personal-access-token.entity.js';
import { User } from '../../src/users/user.entity.js';
import type { TestUser } from '../helpers/factories.js';
import { send, useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;
type Role = 'owner' | 'maintainer' | 'developer' | 'admin' | 'outsider';

const today = () => utcToday();
const ids = (body: unknown) => (body as Json[]).map((token) => token.id);

const LEVELS: Partial<Record<Role, number>> = {
  owner: AccessLevel.Owner,
  maintainer: AccessLevel.Maintainer,
  developer: AccessLevel.Developer,
};

/** A caller with `role` on `source` (a project or group). */
const callerWith = (source: Project | Namespace, role: Role): Promise<TestUser> =>
  server.factories.memberOf(source, LEVELS[role] ?? 0, { admin: role === 'admin' });

/** A project in a group nobody else belongs to, so roles come only from the test's memberships. */
async function projectIn(visibility: VisibilityName = 'private'): Promise<Project> {
  const group = await server.factories.group({ visibility: 'public' });
  return server.factories.project({ namespace: group, visibility });
}

async function adminCreates(userId: number, json: Json) {
  const admin = await server.factories.user({ admin: true });
  return server.request('POST', `/users/${userId}/personal_access_tokens`, { token: admin.token, json });
}

async function projectToken(project: Project, json: Json = {}) {
  const owner = await callerWith(project, 'owner');
  const response = await server.request('POST', `/projects/${project.id}/access_tokens`, {
    token: owner.token,
    json: { name: 'ci', scopes: ['api'], ...json },
  });
  expect(response.status).toBe(201);
  return { owner, created: response.body as Json & { token: string; id: number; user_id: number } };
}

describe('creating personal access tokens', () => {
  it('lets an administrator create a token for a user, shown once and usable at once', async () => {
    const alice = await server.factories.user();
    const response = await adminCreates(alice.user.id, {
      name: 'deploy',
      scopes: ['read_api', 'read_repository'],
      description: 'Pushes tags.',
    });
    expect(response.status).toBe(201);
    const body = response.body as Json & { token: string };
    expect(body).toMatchObject({
      name: 'deploy',
      description: 'Pushes tags.',
      scopes: ['read_api', 'read_repository'],
      user_id: alice.user.id,
      revoked: false,
      active: true,
      last_used_at: null,
      expires_at: addDays(today(), 365),
    });
    expect(body.token).toMatch(/^glpat-/);
    const self = await server.request('GET', '/personal_access_tokens/self', { token: body.token });
    expect(self.status).toBe(200);
    expect(self.body).toMatchObject({ id: body.id, name: 'deploy' });
    expect(self.body).not.toHaveProperty('token');
    const stored = await server.dataSource
      .getRepository(PersonalAccessToken)
      .findOneByOrFail({ id: body.id as number });
    expect(stored.tokenDigest).not.toContain(body.token);
  });

  it('accepts form fields, bracketed or comma-separated scopes', async () => {
    const alice = await server.factories.user();
    const admin = await server.factories.user({ admin: true });
    const bracketed = await send(`${server.api}/users/${alice.user.id}/personal_access_tokens`, 'POST', {
      token: admin.token,
      body: 'name=a&scopes[]=api&scopes[]=read_user',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(bracketed.status).toBe(201);
    expect(bracketed.body).toMatchObject({ scopes: ['api', 'read_user'] });
    const commas = await server.request('POST', `/users/${alice.user.id}/personal_access_tokens`, {
      token: admin.token,
      form: { name: 'b', scopes: 'api,read_api', expires_at: addDays(today(), 3) },
    });
    expect(commas.status).toBe(201);
    expect(commas.body).toMatchObject({ scopes: ['api', 'read_api'], expires_at: addDays(today(), 3) });
  });

  it('is for administrators only, and needs a user that exists', async () => {
    const alice = await server.factories.user();
    const bob = await server.factories.user();
    const forbidden = await server.request('POST', `/users/${bob.user.id}/personal_access_tokens`, {
      token: alice.token,
      json: { name: 'x', scopes: ['api'] },
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ message: '403 Forbidden' });
    const missing = await adminCreates(999999, { name: 'x', scopes: ['api'] });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 User Not Found' });
  });

  it.each([
    [{ scopes: ['api'] }, 400, { error: 'name is missing' }],
    [{ name: 'x' }, 400, { error: 'scopes is missing' }],
    [{ name: 'x', scopes: ['api', 'everything'] }, 400, { error: 'scopes does not have a valid value' }],
    [{ name: 'x', scopes: ['api'], expires_at: 'soon' }, 400, { error: 'expires_at is invalid' }],
    [{ name: ' ', scopes: [] }, 422, { message: "Name can't be blank and Scopes can't be blank" }],
    [
      { name: 'x', scopes: ['api'], description: 'd'.repeat(256) },
      422,
      {
        message: 'Description is too long (maximum is 255 characters)',
      },
    ],
  ])('rejects %j with %i', async (json, status, body) => {
    const alice = await server.factories.user();
    const response = await adminCreates(alice.user.id, json);
    expect(response.status).toBe(status);
    expect(response.body).toEqual(body);
  });

  it('keeps expiry after today and within 365 days', async () => {
    const alice = await server.factories.user();
    const past = await adminCreates(alice.user.id, { name: 'x', scopes: ['api'], expires_at: today() });
    expect(past.status).toBe(422);
    expect(past.body).toEqual({ message: 'Expires at must be in the future' });
    const far = await adminCreates(alice.user.id, {
      name: 'x',
      scopes: ['api'],
      expires_at: addDays(today(), 366),
    });
    expect(far.status).toBe(422);
    expect(far.body).toEqual({ message: `Expires at must be before ${addDays(today(), 365)}` });
    const latest = await adminCreates(alice.user.id, {
      name: 'x',
      scopes: ['api'],
      expires_at: addDays(today(), 365),
    });
    expect(latest.status).toBe(201);
  });

  it('lets users create tokens for themselves with the k8s_proxy and self_rotate scopes only', async () => {
    const alice = await server.factories.user();
    const created = await server.request('POST', '/user/personal_access_tokens', {
      token: alice.token,
      json: { name: 'agent', scopes: ['k8s_proxy', 'self_rotate'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      user_id: alice.user.id,
      scopes: ['k8s_proxy', 'self_rotate'],
      expires_at: addDays(today(), 365),
    });
    const wider = await server.request('POST', '/user/personal_access_tokens', {
      token: alice.token,
      json: { name: 'agent', scopes: ['k8s_proxy', 'api'] },
    });
    expect(wider.status).toBe(400);
    expect(wider.body).toEqual({ error: 'scopes does not have a valid value' });
    const expired = await server.request('POST', '/user/personal_access_tokens', {
      token: alice.token,
      json: { name: 'agent', scopes: ['k8s_proxy'], expires_at: '2020-01-01' },
    });
    expect(expired.status).toBe(422);
  });
});

describe('listing personal access tokens', () => {
  it('shows users their own tokens and administrators everyone’s', async () => {
    const alice = await server.factories.user();
    const bob = await server.factories.user();
    const admin = await server.factories.user({ admin: true });
    const own = await server.request('GET', '/personal_access_tokens', { token: alice.token });
    expect(own.status).toBe(200);
    expect((own.body as Json[]).every((token) => token.user_id === alice.user.id)).toBe(true);
    expect(own.body).toHaveLength(1);

    const all = await server.request('GET', '/personal_access_tokens?per_page=100', { token: admin.token });
    const owners = new Set((all.body as Json[]).map((token) => token.user_id));
    expect(owners.has(alice.user.id) && owners.has(bob.user.id)).toBe(true);

    const bobs = await server.request('GET', `/personal_access_tokens?user_id=${bob.user.id}`, {
      token: admin.token,
    });
    expect((bobs.body as Json[]).map((token) => token.user_id)).toEqual([bob.user.id]);
    const mine = await server.request('GET', `/personal_access_tokens?user_id=${alice.user.id}`, {
      token: alice.token,
    });
    expect(mine.status).toBe(200);
  });

  it('refuses another user’s user_id to non-administrators, and an unknown one to administrators', async () => {
    const alice = await server.factories.user();
    const bob = await server.factories.user();
    const admin = await server.factories.user({ admin: true });
    const other = await server.request('GET', `/personal_access_tokens?user_id=${bob.user.id}`, {
      token: alice.token,
    });
    expect(other.status).toBe(401);
    expect(other.body).toEqual({ message: '401 Unauthorized' });
    const unknown = await server.request('GET', '/personal_access_tokens?user_id=999999', {
      token: admin.token,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Not Found' });
  });

  it('filters by state, revocation, name, dates and use, and sorts', async () => {
    const alice = await server.factories.user({});
    const admin = await server.factories.user({ admin: true });
    const make = async (name: string, expiresAt: string) => {
      const response = await server.request('POST', `/users/${alice.user.id}/personal_access_tokens`, {
        token: admin.token,
        json: { name, scopes: ['read_api'], expires_at: expiresAt },
      });
      return response.body as Json & { id: number; token: string };
    };
    const alpha = await make('alpha tool', addDays(today(), 10));
    const beta = await make('beta tool', addDays(today(), 20));
    const ga = await make('ga', addDays(today(), 30));
    // An expired token cannot be created through the API; age one directly.
    await server.dataSource
      .getRepository(PersonalAccessToken)
      .update({ id: ga.id }, { expiresAt: '2020-01-01' });
    await server.request('DELETE', `/personal_access_tokens/${beta.id}`, { token: admin.token });
    await server.request('GET', '/personal_access_tokens/self', { token: alpha.token });
    // The use is recorded off the request path.
    await expect
      .poll(
        async () =>
          (await server.dataSource.getRepository(PersonalAccessToken).findOneBy({ id: alpha.id }))
            ?.lastUsedAt,
      )
      .not.toBeNull();

    const list = async (query: string) => {
      const response = await server.request(
        'GET',
        `/personal_access_tokens?user_id=${alice.user.id}&${query}`,
        {
          token: admin.token,
        },
      );
      expect(response.status).toBe(200);
      return ids(response.body);
    };
    const factoryToken = (await list('sort=created_asc'))[0];
    expect(await list('state=active')).toEqual([factoryToken, alpha.id]);
    expect(await list('state=inactive')).toEqual([beta.id, ga.id]);
    expect(await list('revoked=true')).toEqual([beta.id]);
    expect(await list('revoked=false')).toEqual([factoryToken, alpha.id, ga.id]);
    expect(await list('search=TOOL')).toEqual([alpha.id, beta.id]);
    expect(await list('search=ga')).toEqual([ga.id]);
    expect(await list('search=g')).toEqual([]);
    expect(await list(`expires_before=${addDays(today(), 15)}`)).toEqual([alpha.id, ga.id]);
    expect(await list(`expires_after=${addDays(today(), 15)}`)).toEqual([beta.id]);
    expect(await list('created_after=2999-01-01T00:00:00')).toEqual([]);
    expect(await list('created_before=2999-01-01')).toHaveLength(4);
    expect(await list('last_used_after=2020-01-01T00:00:00Z')).toEqual([alpha.id]);
    expect(await list('last_used_before=2020-01-01T00:00:00Z')).toEqual([]);
    expect(await list('sort=name_desc')).toEqual([factoryToken, ga.id, beta.id, alpha.id]);
    expect(await list('sort=expires_asc')).toEqual([ga.id, alpha.id, beta.id, factoryToken]);
    expect(await list('sort=nonsense')).toEqual([factoryToken, alpha.id, beta.id, ga.id]);

    const bad = await server.request('GET', '/personal_access_tokens?state=dormant', { token: admin.token });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'state does not have a valid value' });
    const badTime = await server.request('GET', '/personal_access_tokens?created_after=yesterday', {
      token: admin.token,
    });
    expect(badTime.status).toBe(400);
    expect(badTime.body).toEqual({ error: 'created_after is invalid' });
  });

  it('paginates with GitLab’s headers', async () => {
    const alice = await server.factories.user();
    for (let i = 0; i < 4; i++) await server.factories.token(alice.user, ['read_api']);
    const response = await server.request('GET', '/personal_access_tokens?per_page=2&page=2', {
      token: alice.token,
    });
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(2);
    expect(response.headers.get('x-total')).toBe('5');
    expect(response.headers.get('x-total-pages')).toBe('3');
    expect(response.headers.get('x-page')).toBe('2');
    expect(response.headers.get('x-next-page')).toBe('3');
    expect(response.headers.get('x-prev-page')).toBe('1');
    const next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    expect(next?.startsWith(`${server.api}/personal_access_tokens?`)).toBe(true);
    expect(new URL(next!).searchParams.get('page')).toBe('3');
  });
});

describe('reading and revoking personal access tokens', () => {
  it('shows a token to its owner and administrators, hides others’ behind 401', async () => {
    const alice = await server.factories.user();
    const bob = await server.factories.user();
    const admin = await server.factories.user({ admin: true });
    const [aliceToken] = ids(
      (await server.request('GET', '/personal_access_tokens', { token: alice.token })).body,
    ) as number[];
    expect(
      (await server.request('GET', `/personal_access_tokens/${aliceToken}`, { token: alice.token })).status,
    ).toBe(200);
    const other = await server.request('GET', `/personal_access_tokens/${aliceToken}`, { token: bob.token });
    expect(other.status).toBe(401);
    expect(other.body).toEqual({ message: '401 Unauthorized' });
    expect(
      (await server.request('GET', `/personal_access_tokens/${aliceToken}`, { token: admin.token })).status,
    ).toBe(200);
    const unknownAdmin = await server.request('GET', '/personal_access_tokens/999999', {
      token: admin.token,
    });
    expect(unknownAdmin.status).toBe(404);
    expect(unknownAdmin.body).toEqual({ message: '404 Not Found' });
    expect(
      (await server.request('GET', '/personal_access_tokens/999999', { token: alice.token })).status,
    ).toBe(401);
  });

  it('lets any scope read and revoke the token itself', async () => {
    const alice = await server.factories.user();
    const narrow = await server.factories.token(alice.user, ['read_repository']);
    const self = await server.request('GET', '/personal_access_tokens/self', { token: narrow });
    expect(self.status).toBe(200);
    expect(self.body).toMatchObject({ scopes: ['read_repository'], user_id: alice.user.id, active: true });
    // Not an API scope, so the rest of the API stays closed to it.
    expect((await server.request('GET', '/personal_access_tokens', { token: narrow })).status).toBe(403);
    const revoked = await server.request('DELETE', '/personal_access_tokens/self', { token: narrow });
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');
    const after = await server.request('GET', '/personal_access_tokens/self', { token: narrow });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ message: '401 Unauthorized' });
  });

  it.each([
    ['owner', 204],
    ['admin', 204],
    ['other user', 400],
  ] as const)('revoking by ID as the %s answers %i', async (who, status) => {
    const alice = await server.factories.user();
    const target = await server.factories.token(alice.user, ['api']);
    const self = (await server.request('GET', '/personal_access_tokens/self', { token: target }))
      .body as Json;
    const caller = who === 'owner' ? alice : await server.factories.user({ admin: who === 'admin' });
    const response = await server.request('DELETE', `/personal_access_tokens/${self.id}`, {
      token: caller.token,
    });
    expect(response.status).toBe(status);
    if (status === 400)
      expect(response.body).toEqual({ message: '400 Bad request - Not permitted to revoke' });
    expect((await server.request('GET', '/personal_access_tokens/self', { token: target })).status).toBe(
      status === 204 ? 401 : 200,
    );
  });

  it('answers 404 for revoking an unknown token', async () => {
    const alice = await server.factories.user();
    const response = await server.request('DELETE', '/personal_access_tokens/999999', { token: alice.token });
    expect(response.status).toBe(404);
  });
});

describe('rotating personal access tokens', () => {
  it('replaces a token: the old one answers 401, the new one works and expires in a week', async () => {
    const alice = await server.factories.user();
    const old = await server.factories.token(alice.user, ['api', 'read_user']);
    const oldId = ((await server.request('GET', '/personal_access_tokens/self', { token: old })).body as Json)
      .id;
    const response = await server.request('POST', `/personal_access_tokens/${oldId}/rotate`, {
      token: alice.token,
    });
    expect(response.status).toBe(200);
    const rotated = response.body as Json & { token: string };
    expect(rotated).toMatchObject({
      scopes: ['api', 'read_user'],
      user_id: alice.user.id,
      active: true,
      expires_at: addDays(today(), 7),
    });
    expect(rotated.id).not.toBe(oldId);
    expect(rotated.token).not.toBe(old);
    expect((await server.request('GET', '/personal_access_tokens/self', { token: old })).status).toBe(401);
    const fresh = await server.request('GET', '/personal_access_tokens/self', { token: rotated.token });
    expect(fresh.body).toMatchObject({ id: rotated.id });
    const previous = await server.request('GET', `/personal_access_tokens/${oldId}`, { token: alice.token });
    expect(previous.body).toMatchObject({ revoked: true, active: false });
  });

  it('takes expires_at within the limits', async () => {
    const alice = await server.factories.user();
    const [id] = ids((await server.request('GET', '/personal_access_tokens', { token: alice.token })).body);
    const far = await server.request('POST', `/personal_access_tokens/${id}/rotate`, {
      token: alice.token,
      json: { expires_at: addDays(today(), 400) },
    });
    expect(far.status).toBe(400);
    expect(far.body).toEqual({
      message: `400 Bad request - Expires at must be before ${addDays(today(), 365)}`,
    });
    const chosen = await server.request('POST', `/personal_access_tokens/${id}/rotate`, {
      token: alice.token,
      json: { expires_at: addDays(today(), 30) },
    });
    expect(chosen.status).toBe(200);
    expect(chosen.body).toMatchObject({ expires_at: addDays(today(), 30) });
  });

  it('rotates others’ tokens for administrators only', async () => {
    const alice = await server.factories.user();
    const bob = await server.factories.user();
    const admin = await server.factories.user({ admin: true });
    const [id] = ids((await server.request('GET', '/personal_access_tokens', { token: alice.token })).body);
    const other = await server.request('POST', `/personal_access_tokens/${id}/rotate`, { token: bob.token });
    expect(other.status).toBe(401);
    expect(
      (await server.request('POST', '/personal_access_tokens/999999/rotate', { token: bob.token })).status,
    ).toBe(401);
    expect(
      (await server.request('POST', '/personal_access_tokens/999999/rotate', { token: admin.token })).status,
    ).toBe(404);
    const byAdmin = await server.request('POST', `/personal_access_tokens/${id}/rotate`, {
      token: admin.token,
    });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body).toMatchObject({ user_id: alice.user.id });
  });

  it('refuses to rotate a revoked token and revokes the tokens rotated from it', async () => {
    const alice = await server.factories.user();
    const first = await server.factories.token(alice.user, ['api']);
    const firstId = (
      (await server.request('GET', '/personal_access_tokens/self', { token: first })).body as Json
    ).id;
    const second = (
      await server.request('POST', `/personal_access_tokens/${firstId}/rotate`, { token: alice.token })
    ).body as Json & { token: string; id: number };
    const third = (
      await server.request('POST', '/personal_access_tokens/self/rotate', { token: second.token })
    ).body as Json & { token: string };
    expect((await server.request('GET', '/personal_access_tokens/self', { token: third.token })).status).toBe(
      200,
    );

    const reused = await server.request('POST', `/personal_access_tokens/${firstId}/rotate`, {
      token: alice.token,
    });
    expect(reused.status).toBe(400);
    expect(reused.body).toEqual({ message: '400 Bad request - Token already revoked' });
    expect((await server.request('GET', '/personal_access_tokens/self', { token: third.token })).status).toBe(
      401,
    );
    expect((await server.request('GET', '/personal_access_tokens/self', { token: alice.token })).status).toBe(
      200,
    );
  });

  it('rotates the token itself with the api or self_rotate scope only', async () => {
    const alice = await server.factories.user();
    const selfRotating = await server.factories.token(alice.user, ['self_rotate']);
    const rotated = await server.request('POST', '/personal_access_tokens/self/rotate', {
      token: selfRotating,
      form: { expires_at: addDays(today(), 2) },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ scopes: ['self_rotate'], expires_at: addDays(today(), 2) });
    expect(
      (await server.request('GET', '/personal_access_tokens/self', { token: selfRotating })).status,
    ).toBe(401);

    const reader = await server.factories.token(alice.user, ['read_api']);
    const refused = await server.request('POST', '/personal_access_tokens/self/rotate', { token: reader });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'insufficient_scope', scope: 'api self_rotate' });
  });
});

describe('project access tokens', () => {
  it('creates a bot member and a token that acts as it', async () => {
    const project = await projectIn('private');
    const other = await projectIn('private');
    const { created } = await projectToken(project, { name: 'ci', scopes: ['read_api'], access_level: 30 });
    expect(created).toMatchObject({
      name: 'ci',
      scopes: ['read_api'],
      access_level: 30,
      active: true,
      revoked: false,
      expires_at: addDays(today(), 365),
    });
    expect(created.token).toMatch(/^glpat-/);

    const bot = await server.dataSource.getRepository(User).findOneByOrFail({ id: created.user_id });
    expect(bot).toMatchObject({ bot: true, userType: 'project_bot', name: 'ci' });
    expect(bot.username).toMatch(new RegExp(`^project_${project.id}_bot_[0-9a-f]{32}$`));
    expect(bot.email).toBe(`${bot.username}@noreply.127.0.0.1`);
    const member = await server.dataSource
      .getRepository(Member)
      .findOneByOrFail({ sourceType: 'Project', sourceId: project.id, userId: bot.id });
    expect(member.accessLevel).toBe(30);

    const own = await server.request('GET', `/projects/${project.id}`, { token: created.token });
    expect(own.status).toBe(200);
    const foreign = await server.request('GET', `/projects/${other.id}`, { token: created.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ message: '404 Project Not Found' });
  });

  it('defaults to the Maintainer role', async () => {
    const project = await projectIn();
    const { created } = await projectToken(project, { name: 'default' });
    expect(created.access_level).toBe(40);
  });

  it.each([
    ['owner', 'private', 201],
    ['maintainer', 'private', 201],
    ['admin', 'private', 201],
    ['developer', 'private', 400],
    ['outsider', 'public', 400],
    ['outsider', 'private', 404],
  ] as Array<[Role, VisibilityName, number]>)(
    'creating as %s of a %s project answers %i',
    async (role, visibility, status) => {
      const project = await projectIn(visibility);
      const caller = await callerWith(project, role);
      const response = await server.request('POST', `/projects/${project.id}/access_tokens`, {
        token: caller.token,
        json: { name: 'ci', scopes: ['api'], access_level: 30 },
      });
      expect(response.status).toBe(status);
      if (status === 400)
        expect(response.body).toEqual({
          message: '400 Bad request - User does not have permission to create project access token',
        });
      if (status === 404) expect(response.body).toEqual({ message: '404 Project Not Found' });
    },
  );

  it.each([
    ['maintainer', 50, 400],
    ['maintainer', 40, 201],
    ['owner', 50, 201],
    ['admin', 50, 201],
  ] as Array<[Role, number, number]>)('a %s asking for level %i gets %i', async (role, level, status) => {
    const project = await projectIn();
    const caller = await callerWith(project, role);
    const response = await server.request('POST', `/projects/${project.id}/access_tokens`, {
      token: caller.token,
      json: { name: 'ci', scopes: ['api'], access_level: level },
    });
    expect(response.status).toBe(status);
    if (status === 400)
      expect(response.body).toEqual({
        message:
          '400 Bad request - Access level of the token contains permissions not held by the creating user',
      });
  });

  it.each([
    [{ scopes: ['api'] }, { error: 'name is missing' }],
    [{ name: 'x', scopes: ['read_user'] }, { error: 'scopes does not have a valid value' }],
    [{ name: 'x', scopes: ['sudo'] }, { error: 'scopes does not have a valid value' }],
    [{ name: 'x', scopes: ['api'], access_level: 35 }, { error: 'access_level does not have a valid value' }],
    [
      { name: 'x', scopes: ['api'], expires_at: '2020-01-01' },
      {
        message: '400 Bad request - Expires at must be in the future',
      },
    ],
    [{ name: 'x', scopes: [] }, { message: "400 Bad request - Scopes can't be blank" }],
  ])('rejects %j', async (json, body) => {
    const project = await projectIn();
    const owner = await callerWith(project, 'owner');
    const response = await server.request('POST', `/projects/${project.id}/access_tokens`, {
      token: owner.token,
      json,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(body);
  });

  it('enforces the bot token’s scopes, and bots never create tokens', async () => {
    const project = await projectIn();
    const reader = (await projectToken(project, { name: 'reader', scopes: ['read_api'] })).created;
    const refused = await server.request('POST', `/projects/${project.id}/access_tokens`, {
      token: reader.token,
      json: { name: 'more', scopes: ['api'] },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'insufficient_scope', scope: 'api' });
    expect(refused.headers.get('www-authenticate')).toContain('insufficient_scope');

    const writer = (await projectToken(project, { name: 'writer', scopes: ['api'] })).created;
    const bot = await server.request('POST', `/projects/${project.id}/access_tokens`, {
      token: writer.token,
      json: { name: 'more', scopes: ['api'] },
    });
    expect(bot.status).toBe(400);
  });

  it.each([
    ['owner', 200],
    ['maintainer', 200],
    ['admin', 200],
    ['developer', 401],
    ['outsider', 404],
  ] as Array<[Role, number]>)('lists and reads tokens as %s: %i', async (role, status) => {
    const project = await projectIn('private');
    const { created } = await projectToken(project);
    const caller = await callerWith(project, role);
    const list = await server.request('GET', `/projects/${project.id}/access_tokens`, {
      token: caller.token,
    });
    expect(list.status).toBe(status);
    const single = await server.request('GET', `/projects/${project.id}/access_tokens/${created.id}`, {
      token: caller.token,
    });
    expect(single.status).toBe(status);
    if (status === 200) {
      expect(ids(list.body)).toEqual([created.id]);
      expect(single.body).toMatchObject({ id: created.id, access_level: 40, user_id: created.user_id });
      expect(single.body).not.toHaveProperty('token');
    }
    if (status === 401) expect(list.body).toEqual({ message: '401 Unauthorized' });
  });

  it('does not show another project’s token, nor a personal one', async () => {
    const project = await projectIn();
    const other = await projectIn();
    const { owner } = await projectToken(project);
    const foreign = (await projectToken(other)).created;
    const response = await server.request('GET', `/projects/${project.id}/access_tokens/${foreign.id}`, {
      token: owner.token,
    });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: '404 project Access Token Not Found' });
    const personal = (
      (await server.request('GET', '/personal_access_tokens/self', { token: owner.token })).body as Json
    ).id;
    expect(
      (
        await server.request('GET', `/projects/${project.id}/access_tokens/${personal}`, {
          token: owner.token,
        })
      ).status,
    ).toBe(404);
  });

  it('filters by state and paginates', async () => {
    const project = await projectIn();
    const { owner, created } = await projectToken(project, { name: 'one' });
    await projectToken(project, { name: 'two' });
    await projectToken(project, { name: 'three' });
    await server.request('DELETE', `/projects/${project.id}/access_tokens/${created.id}`, {
      token: owner.token,
    });
    const active = await server.request(
      'GET',
      `/projects/${project.id}/access_tokens?state=active&sort=name_asc`,
      {
        token: owner.token,
      },
    );
    expect((active.body as Json[]).map((token) => token.name)).toEqual(['three', 'two']);
    const inactive = await server.request('GET', `/projects/${project.id}/access_tokens?state=inactive`, {
      token: owner.token,
    });
    expect(inactive.body).toMatchObject([{ id: created.id, revoked: true, active: false }]);
    const page = await server.request('GET', `/projects/${project.id}/access_tokens?per_page=1&page=3`, {
      token: owner.token,
    });
    expect(page.headers.get('x-total')).toBe('3');
    expect(page.headers.get('x-next-page')).toBe('');
    expect(page.headers.get('x-prev-page')).toBe('2');
  });

  it('records when a bot token was last used', async () => {
    const project = await projectIn();
    const { owner, created } = await projectToken(project);
    await server.request('GET', `/projects/${project.id}`, { token: created.token });
    // The use is recorded off the request path.
    await expect
      .poll(async () => {
        const single = await server.request('GET', `/projects/${project.id}/access_tokens/${created.id}`, {
          token: owner.token,
        });
        return (single.body as Json).last_used_at;
      })
      .toEqual(expect.any(String));
  });

  it.each([
    ['owner', 204],
    ['maintainer', 204],
    ['admin', 204],
    ['developer', 400],
  ] as Array<[Role, number]>)('revoking as %s answers %i', async (role, status) => {
    const project = await projectIn();
    const { created } = await projectToken(project, { name: 'doomed bot' });
    const caller = await callerWith(project, role);
    const response = await server.request('DELETE', `/projects/${project.id}/access_tokens/${created.id}`, {
      token: caller.token,
    });
    expect(response.status).toBe(status);
    if (status === 400)
      expect(response.body).toEqual({
        message: `400 Bad request - ${caller.user.name} cannot delete doomed bot`,
      });
    const use = await server.request('GET', `/projects/${project.id}`, { token: created.token });
    expect(use.status).toBe(status === 204 ? 401 : 200);
  });

  it('answers 404 when revoking an unknown token', async () => {
    const project = await projectIn();
    const owner = await callerWith(project, 'owner');
    const response = await server.request('DELETE', `/projects/${project.id}/access_tokens/999999`, {
      token: owner.token,
    });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: '404 project Access Token Not Found' });
  });

  it('rotates a token: same bot and role, the old secret stops working', async () => {
    const project = await projectIn();
    const { owner, created } = await projectToken(project, { access_level: 30, description: 'CI' });
    const response = await server.request(
      'POST',
      `/projects/${project.id}/access_tokens/${created.id}/rotate`,
      {
        token: owner.token,
      },
    );
    expect(response.status).toBe(200);
    const rotated = response.body as Json & { token: string };
    expect(rotated).toMatchObject({
      user_id: created.user_id,
      access_level: 30,
      name: 'ci',
      description: 'CI',
      expires_at: addDays(today(), 7),
    });
    expect((await server.request('GET', `/projects/${project.id}`, { token: created.token })).status).toBe(
      401,
    );
    expect((await server.request('GET', `/projects/${project.id}`, { token: rotated.token })).status).toBe(
      200,
    );
  });

  it.each([
    ['owner', 200],
    ['maintainer', 200],
    ['admin', 200],
    ['developer', 401],
  ] as Array<[Role, number]>)('rotating as %s answers %i', async (role, status) => {
    const project = await projectIn();
    const { created } = await projectToken(project);
    const caller = await callerWith(project, role);
    const response = await server.request(
      'POST',
      `/projects/${project.id}/access_tokens/${created.id}/rotate`,
      {
        token: caller.token,
      },
    );
    expect(response.status).toBe(status);
  });

  it('keeps rotation of higher-role tokens and unknown tokens in check', async () => {
    const project = await projectIn();
    const { created } = await projectToken(project, { access_level: 50 });
    const maintainer = await callerWith(project, 'maintainer');
    const higher = await server.request(
      'POST',
      `/projects/${project.id}/access_tokens/${created.id}/rotate`,
      {
        token: maintainer.token,
      },
    );
    expect(higher.status).toBe(400);
    expect(higher.body).toEqual({
      message: '400 Bad request - Not eligible to rotate tokens with permissions not held by the user',
    });
    const admin = await server.factories.user({ admin: true });
    const unknown = await server.request('POST', `/projects/${project.id}/access_tokens/999999/rotate`, {
      token: admin.token,
    });
    expect(unknown.status).toBe(404);
    const unknownForMaintainer = await server.request(
      'POST',
      `/projects/${project.id}/access_tokens/999999/rotate`,
      { token: maintainer.token },
    );
    expect(unknownForMaintainer.status).toBe(401);
  });

  it('lets a bot token rotate itself, and only there', async () => {
    const project = await projectIn();
    const other = await projectIn();
    const { owner, created } = await projectToken(project, { scopes: ['self_rotate', 'read_api'] });
    const foreign = await server.request('POST', `/projects/${other.id}/access_tokens/self/rotate`, {
      token: created.token,
    });
    expect(foreign.status).toBe(404);
    const human = await server.request('POST', `/projects/${project.id}/access_tokens/self/rotate`, {
      token: owner.token,
    });
    expect(human.status).toBe(405);
    const rotated = await server.request('POST', `/projects/${project.id}/access_tokens/self/rotate`, {
      token: created.token,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ user_id: created.user_id, scopes: ['self_rotate', 'read_api'] });
    expect(
      (await server.request('GET', '/personal_access_tokens/self', { token: created.token })).status,
    ).toBe(401);
  });

  it('refuses self rotation to a bot of another project it can see', async () => {
    const project = await projectIn('public');
    const other = await projectIn('private');
    const { created } = await projectToken(other, { scopes: ['api'] });
    const response = await server.request('POST', `/projects/${project.id}/access_tokens/self/rotate`, {
      token: created.token,
    });
    expect(response.status).toBe(401);
  });

  it('addresses a project by its URL-encoded path', async () => {
    const project = await projectIn();
    const { owner, created } = await projectToken(project);
    const view = await server.services.projects.find(owner.caller, project.id);
    const path = encodeURIComponent(`${view.project.namespace.fullPath}/${project.path}`);
    const response = await server.request('GET', `/projects/${path}/access_tokens`, { token: owner.token });
    expect(ids(response.body)).toEqual([created.id]);
  });
});

describe('group access tokens', () => {
  async function groupWith(role: Role, visibility: VisibilityName = 'private') {
    const group = await server.factories.group({ visibility });
    return { group, caller: await callerWith(group, role) };
  }

  it('creates a bot member of the group whose token reaches the group’s projects', async () => {
    const { group, caller } = await groupWith('owner');
    const project = await server.factories.project({ namespace: group, visibility: 'private' });
    const outside = await projectIn('private');
    const response = await server.request('POST', `/groups/${group.id}/access_tokens`, {
      token: caller.token,
      json: { name: 'release bot', scopes: ['read_api'], access_level: 20 },
    });
    expect(response.status).toBe(201);
    const created = response.body as Json & { token: string; user_id: number };
    expect(created).toMatchObject({ access_level: 20, name: 'release bot' });
    const bot = await server.dataSource.getRepository(User).findOneByOrFail({ id: created.user_id });
    expect(bot.username).toMatch(new RegExp(`^group_${group.id}_bot_[0-9a-f]{32}$`));
    const member = await server.dataSource
      .getRepository(Member)
      .findOneByOrFail({ sourceType: 'Namespace', sourceId: group.id, userId: bot.id });
    expect(member.accessLevel).toBe(20);
    expect((await server.request('GET', `/projects/${project.id}`, { token: created.token })).status).toBe(
      200,
    );
    expect((await server.request('GET', `/projects/${outside.id}`, { token: created.token })).status).toBe(
      404,
    );
  });

  it.each([
    ['owner', 201],
    ['admin', 201],
    ['maintainer', 400],
    ['developer', 400],
    ['outsider', 404],
  ] as Array<[Role, number]>)('creating as %s answers %i', async (role, status) => {
    const { group, caller } = await groupWith(role);
    const response = await server.request('POST', `/groups/${group.id}/access_tokens`, {
      token: caller.token,
      json: { name: 'bot', scopes: ['api'], access_level: 30 },
    });
    expect(response.status).toBe(status);
    if (status === 400)
      expect(response.body).toEqual({
        message: '400 Bad request - User does not have permission to create group access token',
      });
    if (status === 404) expect(response.body).toEqual({ message: '404 Group Not Found' });
  });

  it.each([
    ['owner', 200],
    ['admin', 200],
    ['maintainer', 401],
    ['outsider', 404],
  ] as Array<[Role, number]>)('lists and reads as %s: %i', async (role, status) => {
    const { group } = await groupWith('owner');
    const owner = await callerWith(group, 'owner');
    const created = (
      await server.request('POST', `/groups/${encodeURIComponent(group.fullPath)}/access_tokens`, {
        token: owner.token,
        json: { name: 'bot', scopes: ['api'] },
      })
    ).body as Json;
    const caller = await callerWith(group, role);
    const list = await server.request('GET', `/groups/${group.id}/access_tokens`, { token: caller.token });
    expect(list.status).toBe(status);
    const single = await server.request('GET', `/groups/${group.id}/access_tokens/${created.id}`, {
      token: caller.token,
    });
    expect(single.status).toBe(status);
    if (status === 200) {
      expect(ids(list.body)).toEqual([created.id]);
      expect(single.body).toMatchObject({ id: created.id, access_level: 40 });
    }
  });

  it('revokes, rotates and self-rotates', async () => {
    const { group, caller } = await groupWith('owner');
    const make = async (name: string) =>
      (
        await server.request('POST', `/groups/${group.id}/access_tokens`, {
          token: caller.token,
          json: { name, scopes: ['api'] },
        })
      ).body as Json & { token: string; id: number };
    const first = await make('first');
    const second = await make('second');

    const maintainer = await callerWith(group, 'maintainer');
    const refused = await server.request('DELETE', `/groups/${group.id}/access_tokens/${first.id}`, {
      token: maintainer.token,
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      message: `400 Bad request - ${maintainer.user.name} cannot delete first`,
    });
    expect(
      (
        await server.request('DELETE', `/groups/${group.id}/access_tokens/${first.id}`, {
          token: caller.token,
        })
      ).status,
    ).toBe(204);
    expect(
      (await server.request('DELETE', `/groups/${group.id}/access_tokens/999999`, { token: caller.token }))
        .body,
    ).toEqual({ message: '404 group Access Token Not Found' });

    const rotated = await server.request('POST', `/groups/${group.id}/access_tokens/${second.id}/rotate`, {
      token: caller.token,
      json: { expires_at: addDays(today(), 14) },
    });
    expect(rotated.status).toBe(200);
    const next = rotated.body as Json & { token: string };
    expect(next).toMatchObject({ name: 'second', access_level: 40, expires_at: addDays(today(), 14) });
    expect(
      (await server.request('GET', '/personal_access_tokens/self', { token: second.token })).status,
    ).toBe(401);
    const self = await server.request('POST', `/groups/${group.id}/access_tokens/self/rotate`, {
      token: next.token,
    });
    expect(self.status).toBe(200);
    const last = self.body as Json & { token: string };
    expect(last).toMatchObject({ name: 'second', access_level: 40 });

    // Reusing a rotated-away token revokes its whole family.
    const reused = await server.request('POST', `/groups/${group.id}/access_tokens/${second.id}/rotate`, {
      token: caller.token,
    });
    expect(reused.body).toEqual({ message: '400 Bad request - Token already revoked' });
    expect((await server.request('GET', '/personal_access_tokens/self', { token: last.token })).status).toBe(
      401,
    );
    const human = await server.request('POST', `/groups/${group.id}/access_tokens/self/rotate`, {
      token: caller.token,
    });
    expect(human.status).toBe(405);
    expect(
      (
        await server.request('POST', `/groups/${group.id}/access_tokens/${second.id}/rotate`, {
          token: maintainer.token,
        })
      ).status,
    ).toBe(401);
  });
});
