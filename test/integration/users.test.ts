import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { Namespace } from '../../src/namespaces/namespace.entity.js';
import { verifyPassword } from '../../src/users/passwords.js';
import { User } from '../../src/users/user.entity.js';
import { USERNAME_FORMAT_MESSAGE } from '../../src/users/user-validation.js';
import type { TestUser } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

const tag = (prefix: string) => `${prefix}${crypto.randomBytes(3).toString('hex')}`;

const BASIC_KEYS = ['avatar_url', 'id', 'locked', 'name', 'state', 'username', 'web_url'];
const PROFILE_KEYS = [
  'bio',
  'bot',
  'discord',
  'job_title',
  'linkedin',
  'local_time',
  'location',
  'organization',
  'pronouns',
  'public_email',
  'skype',
  'twitter',
  'website_url',
  'work_information',
];
const READABLE_PROFILE_KEYS = ['created_at', 'followers', 'following', 'is_followed'];
const ACCOUNT_KEYS = [
  'can_create_group',
  'can_create_project',
  'color_scheme_id',
  'commit_email',
  'confirmed_at',
  'current_sign_in_at',
  'email',
  'external',
  'identities',
  'last_activity_on',
  'last_sign_in_at',
  'private_profile',
  'projects_limit',
  'theme_id',
  'two_factor_enabled',
];
const ADMIN_KEYS = ['created_by', 'email_reset_offered_at', 'is_admin', 'namespace_id', 'note'];
const DETAIL_KEYS = ['current_sign_in_ip', 'highest_role', 'last_sign_in_ip', 'sign_in_count'];
const keys = (...groups: string[][]) => groups.flat().sort();

const admin = () => server.factories.user({ admin: true });

async function createViaApi(token: string, attrs: Json) {
  return server.request('POST', '/users', { token, json: attrs });
}

describe('GET /user', () => {
  it('returns the caller with the account fields, and the admin fields only to administrators', async () => {
    const alice = await server.factories.user();
    const own = await server.request('GET', '/user', { token: alice.token });
    expect(own.status).toBe(200);
    expect(Object.keys(own.body as Json).sort()).toEqual(
      keys(BASIC_KEYS, PROFILE_KEYS, READABLE_PROFILE_KEYS, ACCOUNT_KEYS),
    );
    expect(own.body).toMatchObject({
      id: alice.user.id,
      username: alice.user.username,
      email: alice.user.email,
      commit_email: alice.user.email,
      projects_limit: 100000,
      can_create_group: true,
      can_create_project: true,
      external: false,
      private_profile: false,
      two_factor_enabled: false,
      identities: [],
      web_url: `${server.url}/${alice.user.username}`,
    });

    const root = await admin();
    const mine = await server.request('GET', '/user', { token: root.token });
    expect(Object.keys(mine.body as Json).sort()).toEqual(
      keys(BASIC_KEYS, PROFILE_KEYS, READABLE_PROFILE_KEYS, ACCOUNT_KEYS, ADMIN_KEYS),
    );
    const namespace = await server.services.users.personalNamespace(root.user.id);
    expect(mine.body).toMatchObject({ is_admin: true, namespace_id: namespace!.id, created_by: null });
  });

  it.each([
    [['read_user'], 200],
    [['read_api'], 200],
    [['api'], 200],
    [['read_repository'], 403],
  ])('accepts a token with scopes %j: %i', async (scopes, status) => {
    const alice = await server.factories.user();
    const token = await server.factories.token(alice.user, scopes);
    const response = await server.request('GET', '/user', { token });
    expect(response.status).toBe(status);
    if (status === 403) expect(response.body).toMatchObject({ error: 'insufficient_scope' });
  });

  it('answers 401 without a token or with an unknown one', async () => {
    expect((await server.request('GET', '/user')).body).toEqual({ message: '401 Unauthorized' });
    expect((await server.request('GET', '/user', { token: 'glpat-nope' })).status).toBe(401);
  });

  it('describes the impersonated user under sudo', async () => {
    const root = await admin();
    const sudoToken = await server.factories.token(root.user, ['api', 'sudo']);
    const bob = await server.factories.user();
    const response = await server.request('GET', `/user?sudo=${bob.user.username}`, { token: sudoToken });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: bob.user.id, email: bob.user.email });
    expect(response.body).not.toHaveProperty('is_admin');
  });

  it('reports can_create_project false once the personal projects reach projects_limit', async () => {
    const root = await admin();
    const alice = await server.factories.user();
    await server.factories.project({ owner: alice });
    await server.request('PUT', `/users/${alice.user.id}`, {
      token: root.token,
      json: { projects_limit: 1 },
    });
    const response = await server.request('GET', '/user', { token: alice.token });
    expect(response.body).toMatchObject({ projects_limit: 1, can_create_project: false });
  });
});

describe('who sees which fields', () => {
  type Role = 'anonymous' | 'user' | 'admin';
  const cases: Array<[Role, number, string[] | null, number, string[] | null]> = [
    ['anonymous', 200, keys(BASIC_KEYS), 403, null],
    ['user', 200, keys(BASIC_KEYS), 200, keys(BASIC_KEYS, PROFILE_KEYS, READABLE_PROFILE_KEYS)],
    [
      'admin',
      200,
      keys(BASIC_KEYS, PROFILE_KEYS, READABLE_PROFILE_KEYS, ACCOUNT_KEYS, ADMIN_KEYS),
      200,
      keys(BASIC_KEYS, PROFILE_KEYS, READABLE_PROFILE_KEYS, ACCOUNT_KEYS, ADMIN_KEYS, DETAIL_KEYS),
    ],
  ];

  it.each(cases)('%s: list %i, single %i', async (role, listStatus, listKeys, singleStatus, singleKeys) => {
    const subject = await server.factories.user();
    const caller =
      role === 'anonymous' ? undefined : role === 'admin' ? await admin() : await server.factories.user();
    const list = await server.request('GET', `/users?username=${subject.user.username.toUpperCase()}`, {
      token: caller?.token,
    });
    expect(list.status).toBe(listStatus);
    const items = list.body as Json[];
    expect(items.map((u) => u.id)).toEqual([subject.user.id]);
    expect(Object.keys(items[0]).sort()).toEqual(listKeys);

    const single = await server.request('GET', `/users/${subject.user.id}`, { token: caller?.token });
    expect(single.status).toBe(singleStatus);
    if (singleKeys) expect(Object.keys(single.body as Json).sort()).toEqual(singleKeys);
    else expect(single.body).toEqual({ message: '403 Forbidden - Not authorized!' });
  });

  it('refuses an anonymous list without username', async () => {
    const response = await server.request('GET', '/users');
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ message: '403 Forbidden - Not authorized to access /api/v4/users' });
  });

  it.each([
    ['a private profile', { privateProfile: true }],
    ['a blocked user', { state: 'blocked' as const }],
    ['an unconfirmed user', { confirmedAt: null }],
  ])('hides created_at and follow counts of %s from others, not from admins', async (_label, change) => {
    const subject = await server.factories.user();
    await server.dataSource.getRepository(User).update(subject.user.id, change);
    const other = await server.factories.user();
    const seen = (await server.request('GET', `/users/${subject.user.id}`, { token: other.token }))
      .body as Json;
    for (const key of READABLE_PROFILE_KEYS) expect(seen).not.toHaveProperty(key);
    const root = await admin();
    const byAdmin = await server.request('GET', `/users/${subject.user.id}`, { token: root.token });
    expect(byAdmin.body).toHaveProperty('created_at');
  });

  it('shows the profile fields that were set, and bots as bots', async () => {
    const root = await admin();
    const created = await createViaApi(root.token, {
      email: `${tag('prof')}@example.com`,
      username: tag('prof'),
      name: 'Profiled',
      password: 'correct horse battery',
      skip_confirmation: true,
      bio: 'Hello',
      job_title: 'Engineer',
      organization: 'ACME',
      pronouns: 'they/them',
    });
    const id = (created.body as Json).id;
    const other = await server.factories.user();
    const seen = await server.request('GET', `/users/${id}`, { token: other.token });
    expect(seen.body).toMatchObject({
      bio: 'Hello',
      job_title: 'Engineer',
      organization: 'ACME',
      pronouns: 'they/them',
      work_information: 'Engineer at ACME',
      bot: false,
      public_email: null,
    });
    const bot = await server.services.users.createUser({
      username: tag('project_1_bot_'),
      name: 'Bot',
      email: `${tag('bot')}@noreply.example.com`,
      bot: true,
      userType: 'project_bot',
    });
    const botSeen = await server.request('GET', `/users/${bot.id}`, { token: other.token });
    expect(botSeen.body).toMatchObject({ bot: true });
  });

  it('answers 404 for an unknown user and 400 for an id that is not a number', async () => {
    const alice = await server.factories.user();
    const missing = await server.request('GET', '/users/99999999', { token: alice.token });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 User Not Found' });
    const invalid = await server.request('GET', '/users/abc', { token: alice.token });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ error: 'id is invalid' });
  });

  it('reports the highest role to administrators', async () => {
    const subject = await server.factories.user();
    const group = await server.factories.group();
    await server.factories.member(group, subject.user, AccessLevel.Developer);
    const project = await server.factories.project();
    await server.factories.member(project, subject.user, AccessLevel.Maintainer);
    const expiredGroup = await server.factories.group();
    await server.factories.member(expiredGroup, subject.user, AccessLevel.Owner, '2020-01-01');
    const root = await admin();
    const response = await server.request('GET', `/users/${subject.user.id}`, { token: root.token });
    expect(response.body).toMatchObject({ highest_role: 40 });
  });
});

describe('GET /users filters', () => {
  /** Users whose usernames share a fresh prefix, so that `search` isolates them from the rest. */
  async function world() {
    const prefix = tag('w');
    const make = (name: string, attrs: Parameters<typeof server.factories.user>[0] = {}) =>
      server.factories.user({ username: `${prefix}-${name}`, name: `${prefix} ${name}`, ...attrs });
    const plain = await make('plain');
    const external = await make('external', { external: true });
    const blocked = await make('blocked', { state: 'blocked' });
    const chief = await make('chief', { admin: true });
    const bot = await server.services.users.createUser({
      username: `${prefix}-bot`,
      name: `${prefix} bot`,
      email: `${prefix}-bot@noreply.example.com`,
      bot: true,
      userType: 'project_bot',
    });
    const root = await admin();
    const byName: Record<string, number> = {
      plain: plain.user.id,
      external: external.user.id,
      blocked: blocked.user.id,
      chief: chief.user.id,
      bot: bot.id,
    };
    return { prefix, root, byName, plain };
  }

  const names = (body: unknown, byName: Record<string, number>) => {
    const ids = new Map(Object.entries(byName).map(([name, id]) => [id, name]));
    return (body as Json[]).map((u) => ids.get(u.id as number)).sort();
  };

  it.each([
    ['', ['blocked', 'bot', 'chief', 'external', 'plain']],
    ['active=true', ['bot', 'chief', 'external', 'plain']],
    ['exclude_active=true', ['blocked']],
    ['blocked=true', ['blocked']],
    ['external=true', ['external']],
    ['exclude_external=true', ['blocked', 'bot', 'chief', 'plain']],
    ['humans=true', ['blocked', 'chief', 'external', 'plain']],
    ['exclude_humans=true', ['bot']],
    ['exclude_internal=true', ['blocked', 'bot', 'chief', 'external', 'plain']],
    ['without_project_bots=true', ['blocked', 'chief', 'external', 'plain']],
    ['admins=true', ['chief']],
    ['two_factor=enabled', []],
    ['two_factor=disabled', ['blocked', 'bot', 'chief', 'external', 'plain']],
    ['active=false', ['blocked', 'bot', 'chief', 'external', 'plain']],
  ])('as an administrator, %s', async (filter, expected) => {
    const { prefix, root, byName } = await world();
    const response = await server.request('GET', `/users?search=${prefix}&${filter}`, { token: root.token });
    expect(response.status).toBe(200);
    expect(names(response.body, byName)).toEqual(expected);
  });

  it.each([
    ['', ['bot', 'chief', 'external', 'plain']],
    ['blocked=true', []],
    ['admins=true', ['bot', 'chief', 'external', 'plain']],
    ['two_factor=enabled', ['bot', 'chief', 'external', 'plain']],
    ['external=true', ['external']],
  ])('as a user, blocked users are hidden and admin filters ignored: %s', async (filter, expected) => {
    const { prefix, byName } = await world();
    const alice = await server.factories.user();
    const response = await server.request('GET', `/users?search=${prefix}&${filter}`, { token: alice.token });
    expect(names(response.body, byName)).toEqual(expected);
  });

  it('searches names and usernames in part, public email exactly, and email only for administrators', async () => {
    const { prefix, root, byName, plain } = await world();
    const alice = await server.factories.user();
    const byPart = await server.request('GET', `/users?search=${prefix.slice(1)}-PLA`, {
      token: alice.token,
    });
    expect(names(byPart.body, byName)).toEqual(['plain']);
    const byAt = await server.request('GET', `/users?search=@${prefix}-plain`, { token: alice.token });
    expect(names(byAt.body, byName)).toEqual(['plain']);

    const email = plain.user.email;
    const byEmailUser = await server.request('GET', `/users?search=${email}`, { token: alice.token });
    expect(byEmailUser.body).toEqual([]);
    const byEmailAdmin = await server.request('GET', `/users?search=${email.toUpperCase()}`, {
      token: root.token,
    });
    expect(names(byEmailAdmin.body, byName)).toEqual(['plain']);
    const partialEmail = await server.request('GET', `/users?search=${email.slice(0, -3)}`, {
      token: root.token,
    });
    expect(partialEmail.body).toEqual([]);

    await server.request('PUT', `/users/${plain.user.id}`, {
      token: root.token,
      json: { public_email: email },
    });
    const byPublic = await server.request('GET', `/users?search=${email}`, { token: alice.token });
    expect(names(byPublic.body, byName)).toEqual(['plain']);
  });

  it('filters by creation time', async () => {
    const { prefix, root, byName } = await world();
    const users = server.dataSource.getRepository(User);
    await users.update(byName.plain, { createdAt: new Date('2020-01-01T00:00:00Z') });
    await users.update(byName.external, { createdAt: new Date('2021-01-01T00:00:00Z') });
    const before = await server.request(
      'GET',
      `/users?search=${prefix}&created_before=2020-06-01T00:00:00Z`,
      {
        token: root.token,
      },
    );
    expect(names(before.body, byName)).toEqual(['plain']);
    const between = await server.request(
      'GET',
      `/users?search=${prefix}&created_after=2020-06-01T00:00:00Z&created_before=2022-01-01T00:00:00Z`,
      { token: root.token },
    );
    expect(names(between.body, byName)).toEqual(['external']);
    const bad = await server.request('GET', `/users?created_after=yesterday`, { token: root.token });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'created_after is invalid' });
  });

  it('rejects a value outside an enum', async () => {
    const root = await admin();
    const response = await server.request('GET', '/users?order_by=email', { token: root.token });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'order_by does not have a valid value' });
  });
});

describe('GET /users order and pagination', () => {
  async function trio() {
    const prefix = tag('o');
    const c = await server.factories.user({ username: `${prefix}-c`, name: `${prefix} Alpha` });
    const a = await server.factories.user({ username: `${prefix}-a`, name: `${prefix} Charlie` });
    const b = await server.factories.user({ username: `${prefix}-b`, name: `${prefix} Bravo` });
    return { prefix, a, b, c };
  }
  const usernames = (body: unknown) => (body as Json[]).map((u) => (u.username as string).split('-').pop());

  it.each([
    ['', ['b', 'a', 'c']],
    ['order_by=id&sort=asc', ['c', 'a', 'b']],
    ['order_by=name&sort=asc', ['c', 'b', 'a']],
    ['order_by=name', ['a', 'b', 'c']],
    ['order_by=username&sort=asc', ['a', 'b', 'c']],
    ['order_by=created_at&sort=asc', ['c', 'a', 'b']],
    ['order_by=updated_at&sort=desc', ['b', 'a', 'c']],
  ])('administrators order with %s', async (order, expected) => {
    const { prefix } = await trio();
    const root = await admin();
    const response = await server.request('GET', `/users?search=${prefix}&${order}`, { token: root.token });
    expect(usernames(response.body)).toEqual(expected);
  });

  it('ignores order_by for other callers: exact matches first, then by name', async () => {
    const { prefix, b } = await trio();
    const alice = await server.factories.user();
    const ordered = await server.request('GET', `/users?search=${prefix}&order_by=username&sort=asc`, {
      token: alice.token,
    });
    expect(usernames(ordered.body)).toEqual(['c', 'b', 'a']);
    // `<prefix>-b` is b's exact username, and a part of bb's, whose name sorts first.
    await server.factories.user({ username: `${prefix}-bb`, name: `${prefix} Aardvark` });
    const exactFirst = await server.request('GET', `/users?search=${b.user.username.toUpperCase()}`, {
      token: alice.token,
    });
    expect(usernames(exactFirst.body)).toEqual(['b', 'bb']);
    const unsearched = await server.request('GET', `/users?order_by=username&sort=asc&per_page=3`, {
      token: alice.token,
    });
    const ids = (unsearched.body as Json[]).map((u) => u.id as number);
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
  });

  it('pages with every pagination header, following Link rel="next"', async () => {
    const prefix = tag('p');
    for (let i = 0; i < 5; i++) await server.factories.user({ username: `${prefix}-${i}` });
    const root = await admin();
    let url: string | undefined = `${server.api}/users?search=${prefix}&per_page=2&order_by=id&sort=asc`;
    const seen: string[] = [];
    let first = true;
    while (url) {
      const response = await server.request('GET', url.slice(server.api.length), { token: root.token });
      expect(response.headers.get('x-total')).toBe('5');
      expect(response.headers.get('x-total-pages')).toBe('3');
      expect(response.headers.get('x-per-page')).toBe('2');
      if (first) {
        expect(response.headers.get('x-page')).toBe('1');
        expect(response.headers.get('x-next-page')).toBe('2');
        expect(response.headers.get('x-prev-page')).toBe('');
        first = false;
      }
      seen.push(...usernames(response.body).map(String));
      url = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    }
    expect(seen).toEqual(['0', '1', '2', '3', '4']);
  });
});

describe('POST /users', () => {
  it('creates a user with its personal namespace and a hashed password', async () => {
    const root = await admin();
    const username = tag('new');
    const response = await createViaApi(root.token, {
      email: `${username}@example.com`,
      username,
      name: 'New Person',
      password: 'correct horse battery',
      bio: 'Writes things.',
      note: 'Hired in March',
      can_create_group: false,
      projects_limit: 7,
      private_profile: null,
    });
    expect(response.status).toBe(201);
    const body = response.body as Json;
    expect(Object.keys(body).sort()).toEqual(
      keys(BASIC_KEYS, PROFILE_KEYS, READABLE_PROFILE_KEYS, ACCOUNT_KEYS, ADMIN_KEYS),
    );
    expect(body).toMatchObject({
      username,
      name: 'New Person',
      email: `${username}@example.com`,
      state: 'active',
      is_admin: false,
      bio: 'Writes things.',
      note: 'Hired in March',
      can_create_group: false,
      projects_limit: 7,
      private_profile: false,
      confirmed_at: null,
      created_by: { id: root.user.id, username: root.user.username },
    });
    expect(body).not.toHaveProperty('password');
    const namespace = await server.dataSource
      .getRepository(Namespace)
      .findOneByOrFail({ ownerId: body.id as number });
    expect(namespace).toMatchObject({ kind: 'user', path: username, fullPath: username, name: 'New Person' });
    expect(body.namespace_id).toBe(namespace.id);
    const stored = await server.dataSource
      .getRepository(User)
      .createQueryBuilder('u')
      .addSelect('u.passwordDigest')
      .where('u.id = :id', { id: body.id })
      .getOneOrFail();
    expect(stored.passwordDigest).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
    expect(await verifyPassword('correct horse battery', stored.passwordDigest)).toBe(true);
    expect(await verifyPassword('wrong horse battery', stored.passwordDigest)).toBe(false);
  });

  it('accepts form fields, confirms with skip_confirmation and limits external users', async () => {
    const root = await admin();
    const username = tag('form');
    const response = await server.request('POST', '/users', {
      token: root.token,
      form: {
        email: `${username}@example.com`,
        username,
        name: 'Form Person',
        force_random_password: 'true',
        skip_confirmation: 'True',
        external: '1',
        projects_limit: '50',
        can_create_group: 'true',
        admin: 'false',
      },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ external: true, projects_limit: 0, can_create_group: false });
    expect((response.body as Json).confirmed_at).toEqual(expect.any(String));
  });

  it.each([
    [{}, 'email is missing, name is missing, username is missing'],
    [
      { email: 'x@example.com', username: 'xyz', name: 'X' },
      'password, reset_password, force_random_password are missing, at least one parameter must be provided',
    ],
    [
      { email: 'x@example.com', username: 'xyz', name: 'X', password: 'abcdefgh', admin: 'maybe' },
      'admin is invalid',
    ],
    [
      { email: 'x@example.com', username: 'xyz', name: 'X', password: 'abcdefgh', projects_limit: 'many' },
      'projects_limit is invalid',
    ],
  ])('rejects parameters %j', async (attrs, error) => {
    const root = await admin();
    const response = await createViaApi(root.token, attrs);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error });
  });

  it.each([
    [{ username: 'has space' }, { username: [USERNAME_FORMAT_MESSAGE] }],
    [{ username: '-dash' }, { username: [USERNAME_FORMAT_MESSAGE] }],
    [{ username: 'repo.git' }, { username: [USERNAME_FORMAT_MESSAGE] }],
    [{ username: 'x' }, { username: ['is too short (minimum is 2 characters)'] }],
    [{ username: 'admin' }, { username: ['admin is a reserved name'] }],
    [{ username: 'feed.json' }, { username: ['ending with a reserved file extension is not allowed.'] }],
    [{ email: 'not-an-email' }, { email: ['is invalid'] }],
    [{ name: '' }, { name: ["can't be blank"] }],
    [{ name: 'n'.repeat(256) }, { name: ['is too long (maximum is 255 characters)'] }],
    [{ password: 'short' }, { password: ['is too short (minimum is 8 characters)'] }],
    [{ password: undefined, reset_password: false }, { password: ["can't be blank"] }],
    [{ bio: 'b'.repeat(256) }, { bio: ['is too long (maximum is 255 characters)'] }],
    [{ pronouns: 'p'.repeat(51) }, { pronouns: ['is too long (maximum is 50 characters)'] }],
    [{ projects_limit: -1 }, { projects_limit: ['must be greater than or equal to 0'] }],
    [{ public_email: 'someone-else@example.com' }, { public_email: ['is not an email you own'] }],
    [
      { email: 'bad', password: 'short' },
      { email: ['is invalid'], password: ['is too short (minimum is 8 characters)'] },
    ],
  ])('validates %j', async (change, errors) => {
    const root = await admin();
    const username = tag('v');
    const response = await createViaApi(root.token, {
      email: `${username}@example.com`,
      username,
      name: 'Valid Name',
      password: 'long enough password',
      ...change,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ message: errors });
  });

  it('answers 409 for a taken email or username, before other validation errors', async () => {
    const root = await admin();
    const existing = await server.factories.user();
    const takenEmail = await createViaApi(root.token, {
      email: existing.user.email.toUpperCase(),
      username: tag('fresh'),
      name: 'Someone',
      password: 'short',
    });
    expect(takenEmail.status).toBe(409);
    expect(takenEmail.body).toEqual({ message: 'Email has already been taken' });
    const takenUsername = await createViaApi(root.token, {
      email: `${tag('fresh')}@example.com`,
      username: existing.user.username.toUpperCase(),
      name: 'Someone',
      password: 'long enough password',
    });
    expect(takenUsername.status).toBe(409);
    expect(takenUsername.body).toEqual({ message: 'Username has already been taken' });
  });

  it('lets only one of two concurrent creates take a username', async () => {
    const root = await admin();
    const username = tag('race');
    const responses = await Promise.all(
      [1, 2].map((i) =>
        createViaApi(root.token, {
          email: `${username}-${i}@example.com`,
          username,
          name: 'Racer',
          password: 'long enough password',
        }),
      ),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(responses.find((r) => r.status === 409)!.body).toEqual({
      message: 'Username has already been taken',
    });
  });

  it('refuses a username that is already a group path', async () => {
    const root = await admin();
    const group = await server.factories.group({ path: tag('team') });
    const response = await createViaApi(root.token, {
      email: `${tag('g')}@example.com`,
      username: group.path.toUpperCase(),
      name: 'Grouped',
      password: 'long enough password',
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ message: { username: ['has already been taken'] } });
  });

  it.each([
    ['a user', true, 403, { message: '403 Forbidden' }],
    ['nobody', false, 401, { message: '401 Unauthorized' }],
  ])('is for administrators only: %s gets %i', async (_label, signedIn, status, body) => {
    const caller = signedIn ? await server.factories.user() : undefined;
    const response = await createViaApi(caller?.token ?? '', {
      email: `${tag('n')}@example.com`,
      username: tag('n'),
      name: 'Nope',
      password: 'long enough password',
    });
    expect(response.status).toBe(status);
    expect(response.body).toEqual(body);
  });
});

describe('PUT /users/:id', () => {
  it('renames the personal namespace with the username, and projects follow', async () => {
    const root = await admin();
    const alice = await server.factories.user();
    const project = await server.factories.project({ owner: alice });
    const renamed = tag('renamed');
    const response = await server.request('PUT', `/users/${alice.user.id}`, {
      token: root.token,
      json: { username: renamed, name: 'Alice Renamed', bio: 'New bio' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      username: renamed,
      name: 'Alice Renamed',
      bio: 'New bio',
      web_url: `${server.url}/${renamed}`,
      email: alice.user.email,
    });
    const namespace = await server.services.users.personalNamespace(alice.user.id);
    expect(namespace).toMatchObject({ path: renamed, fullPath: renamed, name: 'Alice Renamed' });
    const shown = await server.request('GET', `/projects/${project.id}`, { token: alice.token });
    expect(shown.body).toMatchObject({ path_with_namespace: `${renamed}/${project.path}` });
    const byPath = await server.request(
      'GET',
      `/projects/${encodeURIComponent(`${renamed}/${project.path}`)}`,
      {
        token: alice.token,
      },
    );
    expect(byPath.status).toBe(200);
  });

  it('changes only what is sent, including the password', async () => {
    const root = await admin();
    const alice = await server.factories.user();
    const response = await server.request('PUT', `/users/${alice.user.id}`, {
      token: root.token,
      form: { password: 'brand new password', admin: 'true', note: 'promoted' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      username: alice.user.username,
      name: alice.user.name,
      is_admin: true,
      note: 'promoted',
    });
    const stored = await server.dataSource
      .getRepository(User)
      .createQueryBuilder('u')
      .addSelect('u.passwordDigest')
      .where('u.id = :id', { id: alice.user.id })
      .getOneOrFail();
    expect(await verifyPassword('brand new password', stored.passwordDigest)).toBe(true);
    const again = await server.request('PUT', `/users/${alice.user.id}`, {
      token: root.token,
      json: { username: alice.user.username, email: alice.user.email.toUpperCase() },
    });
    expect(again.status).toBe(200);
  });

  it('makes users external and back, as GitLab resets the limits', async () => {
    const root = await admin();
    const alice = await server.factories.user();
    const external = await server.request('PUT', `/users/${alice.user.id}`, {
      token: root.token,
      json: { external: true },
    });
    expect(external.body).toMatchObject({ external: true, projects_limit: 0, can_create_group: false });
    const stillExternal = await server.request('PUT', `/users/${alice.user.id}`, {
      token: root.token,
      json: { projects_limit: 3 },
    });
    expect(stillExternal.body).toMatchObject({ external: true, projects_limit: 3 });
    const internal = await server.request('PUT', `/users/${alice.user.id}`, {
      token: root.token,
      json: { external: false, can_create_group: false },
    });
    expect(internal.body).toMatchObject({ external: false, projects_limit: 100000, can_create_group: false });
  });

  it('answers 409 when the username or email belongs to someone else', async () => {
    const root = await admin();
    const alice = await server.factories.user();
    const bob = await server.factories.user();
    const username = await server.request('PUT', `/users/${alice.user.id}`, {
      token: root.token,
      json: { username: bob.user.username },
    });
    expect(username.status).toBe(409);
    expect(username.body).toEqual({ message: 'Username has already been taken' });
    const email = await server.request('PUT', `/users/${alice.user.id}`, {
      token: root.token,
      json: { email: bob.user.email },
    });
    expect(email.status).toBe(409);
    expect(email.body).toEqual({ message: 'Email has already been taken' });
  });

  it('validates like creation', async () => {
    const root = await admin();
    const alice = await server.factories.user();
    const group = await server.factories.group();
    const cases: Array<[Json, Json]> = [
      [{ username: 'bad name' }, { username: [USERNAME_FORMAT_MESSAGE] }],
      [{ username: group.path }, { username: ['has already been taken'] }],
      [{ email: 'nope' }, { email: ['is invalid'] }],
      [{ password: 'short' }, { password: ['is too short (minimum is 8 characters)'] }],
      [{ public_email: 'someone@else.example' }, { public_email: ['is not an email you own'] }],
    ];
    for (const [change, errors] of cases) {
      const response = await server.request('PUT', `/users/${alice.user.id}`, {
        token: root.token,
        json: change,
      });
      expect(response.status, JSON.stringify(change)).toBe(400);
      expect(response.body).toEqual({ message: errors });
    }
    const unchanged = await server.request('GET', `/users/${alice.user.id}`, { token: root.token });
    expect(unchanged.body).toMatchObject({ username: alice.user.username, email: alice.user.email });
  });

  it('answers 404 for an unknown user and 403 to users who are not administrators', async () => {
    const root = await admin();
    const missing = await server.request('PUT', '/users/99999999', {
      token: root.token,
      json: { name: 'X' },
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 User Not Found' });
    const alice = await server.factories.user();
    const own = await server.request('PUT', `/users/${alice.user.id}`, {
      token: alice.token,
      json: { admin: true },
    });
    expect(own.status).toBe(403);
    expect(own.body).toEqual({ message: '403 Forbidden' });
  });
});

describe('blocking', () => {
  it('blocks a user, whose token then answers 401, and unblocks them', async () => {
    const root = await admin();
    const alice: TestUser = await server.factories.user();
    expect((await server.request('GET', '/user', { token: alice.token })).status).toBe(200);

    const blocked = await server.request('POST', `/users/${alice.user.id}/block`, { token: root.token });
    expect(blocked.status).toBe(201);
    expect(blocked.body).toBe(true);
    const refused = await server.request('GET', '/user', { token: alice.token });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ message: '401 Unauthorized' });
    expect(
      (await server.request('GET', `/users/${alice.user.id}`, { token: root.token })).body,
    ).toMatchObject({ state: 'blocked' });

    const again = await server.request('POST', `/users/${alice.user.id}/block`, { token: root.token });
    expect(again.status).toBe(201);
    expect(again.text).toBe('null');

    const unblocked = await server.request('POST', `/users/${alice.user.id}/unblock`, { token: root.token });
    expect(unblocked.status).toBe(201);
    expect(unblocked.body).toBe(true);
    expect((await server.request('GET', '/user', { token: alice.token })).status).toBe(200);

    const notBlocked = await server.request('POST', `/users/${alice.user.id}/unblock`, { token: root.token });
    expect(notBlocked.status).toBe(201);
    expect(notBlocked.body).toBe(false);
  });

  it('refuses to block the caller themself', async () => {
    const root = await admin();
    const response = await server.request('POST', `/users/${root.user.id}/block`, { token: root.token });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({
      message: '403 Forbidden - The API initiating user cannot be blocked by the API',
    });
  });

  it.each(['block', 'unblock'])(
    '%s: 404 for an unknown user, 403 for a user, 401 for nobody',
    async (action) => {
      const root = await admin();
      const missing = await server.request('POST', `/users/99999999/${action}`, { token: root.token });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ message: '404 User Not Found' });
      const alice = await server.factories.user();
      const bob = await server.factories.user();
      const forbidden = await server.request('POST', `/users/${bob.user.id}/${action}`, {
        token: alice.token,
      });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toEqual({ message: '403 Forbidden' });
      expect((await server.request('POST', `/users/${bob.user.id}/${action}`)).status).toBe(401);
      const readOnly = await server.factories.token(root.user, ['read_api']);
      expect(
        (await server.request('POST', `/users/${bob.user.id}/${action}`, { token: readOnly })).status,
      ).toBe(403);
    },
  );
});
