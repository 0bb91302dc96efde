import { describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Json = Record<string, unknown>;

const insufficient = (scope: string) => ({
  error: 'insufficient_scope',
  error_description: 'The request requires higher privileges than provided by the access token.',
  scope,
});

describe('token scopes', () => {
  // [scopes of the token, method, what, expected status, scopes named in the refusal]
  const cases: Array<[string[], 'GET' | 'POST' | 'PUT', string, number, string?]> = [
    [['api'], 'GET', 'project', 200],
    [['api'], 'PUT', 'project', 200],
    [['read_api'], 'GET', 'project', 200],
    [['read_api'], 'GET', 'projects', 200],
    [['read_api'], 'PUT', 'project', 403, 'api'],
    [['read_api'], 'POST', 'projects', 403, 'api'],
    [['read_user'], 'GET', 'project', 403, 'api read_api'],
    [['read_repository', 'write_repository'], 'GET', 'projects', 403, 'api read_api'],
    [['read_registry'], 'PUT', 'project', 403, 'api'],
    [['read_user'], 'GET', 'user', 200],
    [['read_api'], 'GET', 'user', 200],
    [['read_repository'], 'GET', 'user', 403, 'api read_api read_user'],
  ];

  it.each(cases)('%j: %s %s answers %i', async (scopes, method, what, status, named) => {
    const owner = await server.factories.user();
    const project = await server.factories.project({ owner });
    const token = await server.factories.token(owner.user, scopes);
    const path = { project: `/projects/${project.id}`, projects: '/projects', user: '/user' }[what]!;
    const json = method === 'GET' ? undefined : { name: `n${Date.now()}`, description: 'd' };
    const response = await server.request(method, path, { token, json });
    expect(response.status).toBe(status === 200 && method === 'POST' ? 201 : status);
    if (named) {
      expect(response.body).toEqual(insufficient(named));
      expect(response.headers.get('www-authenticate')).toContain(`error="insufficient_scope"`);
      expect(response.headers.get('www-authenticate')).toContain(`scope="${named}"`);
    }
  });

  it('are checked before anything else: a read_api token cannot even probe a private project by writing', async () => {
    const outsider = await server.factories.user();
    const project = await server.factories.project({ visibility: 'private' });
    const token = await server.factories.token(outsider.user, ['read_api']);
    const write = await server.request('PUT', `/projects/${project.id}`, {
      token,
      json: { description: 'x' },
    });
    expect(write.status).toBe(403);
    expect((write.body as Json).error).toBe('insufficient_scope');
  });
});

describe('tokens that no longer work', () => {
  it.each([
    ['expired yesterday', { expiresAt: '2000-01-01' }],
    ['expiring today', { expiresAt: new Date().toISOString().slice(0, 10) }],
  ])('a token %s answers 401', async (_what, attrs) => {
    const user = await server.factories.user();
    const token = await server.factories.token(user.user, ['api'], attrs);
    const response = await server.request('GET', '/projects', { token });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ message: '401 Unauthorized' });
  });

  it('a revoked token, or the token of a blocked user, answers 401 even on public reads', async () => {
    const user = await server.factories.user();
    await server.dataSource.query('UPDATE personal_access_tokens SET revoked = true WHERE user_id = $1', [
      user.user.id,
    ]);
    expect((await server.request('GET', '/projects', { token: user.token })).status).toBe(401);

    const blocked = await server.factories.user({ state: 'blocked' });
    expect((await server.request('GET', '/projects', { token: blocked.token })).status).toBe(401);
    expect((await server.request('GET', '/projects')).status).toBe(200);
  });

  it('an unknown token answers 401, also by Bearer and in the query', async () => {
    for (const options of [{ token: 'glpat-nope' }, { headers: { Authorization: 'Bearer glpat-nope' } }]) {
      expect((await server.request('GET', '/projects', options)).status).toBe(401);
    }
    expect((await server.request('GET', '/projects?private_token=glpat-nope')).status).toBe(401);
  });
});

describe('sudo', () => {
  async function adminWithSudo() {
    const admin = await server.factories.user({ admin: true });
    return { admin, token: await server.factories.token(admin.user, ['api', 'sudo']) };
  }

  it('lets an administrator act as another user, by username header or id in the query', async () => {
    const { token } = await adminWithSudo();
    const target = await server.factories.user();
    const project = await server.factories.project({ owner: target, visibility: 'private' });

    const asTarget = await server.request('GET', '/projects?membership=true', {
      token,
      headers: { Sudo: target.user.username },
    });
    expect((asTarget.body as Json[]).map((p) => p.id)).toEqual([project.id]);

    const created = await server.request('POST', `/projects?sudo=${target.user.id}`, {
      token,
      json: { name: 'made-by-sudo' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      creator_id: target.user.id,
      path_with_namespace: `${target.user.username}/made-by-sudo`,
    });
    expect((created.body as Json).runners_token).toBeDefined();
  });

  it('keeps the acting user within their own rights', async () => {
    const { token } = await adminWithSudo();
    const target = await server.factories.user();
    const hidden = await server.factories.project({ visibility: 'private' });
    const response = await server.request('GET', `/projects/${hidden.id}`, {
      token,
      headers: { Sudo: target.user.username },
    });
    expect(response.status).toBe(404);
  });

  it.each([
    [
      'a regular user',
      false,
      ['api', 'sudo'],
      'x',
      403,
      { message: '403 Forbidden - Must be admin to use sudo' },
    ],
    ['an admin token without the sudo scope', true, ['api'], 'x', 403, insufficient('sudo')],
    [
      'an unknown user',
      true,
      ['api', 'sudo'],
      'nobody-here',
      404,
      {
        message: "404 User with ID or username 'nobody-here' Not Found",
      },
    ],
  ])('is refused for %s', async (_what, admin, scopes, who, status, body) => {
    const caller = await server.factories.user({ admin });
    const target = await server.factories.user();
    const token = await server.factories.token(caller.user, scopes);
    const response = await server.request('GET', '/projects', {
      token,
      headers: { Sudo: who === 'x' ? target.user.username : who },
    });
    expect(response.status).toBe(status);
    expect(response.body).toEqual(body);
  });

  it('without a token answers 401', async () => {
    const target = await server.factories.user();
    const response = await server.request('GET', `/projects?sudo=${target.user.id}`);
    expect(response.status).toBe(401);
  });

  it('as a member keeps that member role, not the administrator', async () => {
    const { token } = await adminWithSudo();
    const guest = await server.factories.user();
    const project = await server.factories.project({ visibility: 'private' });
    await server.factories.member(project, guest.user, AccessLevel.Guest);
    const edit = await server.request('PUT', `/projects/${project.id}`, {
      token,
      headers: { Sudo: String(guest.user.id) },
      json: { description: 'x' },
    });
    expect(edit.status).toBe(403);
  });
});
