import { describe, expect, it } from 'vitest';
import { send, sendRaw, useTestServer } from '../helpers/server.js';

/** GitLab's wire conventions (../shared/docs/gitlab-wire.md), each exercised through a real operation. */
const server = useTestServer();

type ProjectBody = {
  id: number;
  name: string;
  path: string;
  visibility: string;
  topics: string[];
  issues_enabled: boolean;
};

describe('parameters arrive three ways', () => {
  it.each([
    ['JSON body', (name: string) => ({ json: { name, visibility: 'internal', issues_enabled: false } })],
    ['form fields', (name: string) => ({ form: { name, visibility: 'internal', issues_enabled: 'false' } })],
    [
      'query string with {} body',
      (name: string) => ({ query: `name=${name}&visibility=internal&issues_enabled=0`, json: {} }),
    ],
    [
      'mixed query and body',
      (name: string) => ({ query: 'visibility=internal', json: { name, issues_enabled: 'False' } }),
    ],
  ])('%s', async (_how, build) => {
    const alice = await server.factories.user();
    const name = `p${Math.random().toString(36).slice(2, 8)}`;
    const { query, ...options } = build(name) as {
      query?: string;
      json?: unknown;
      form?: Record<string, string>;
    };
    const response = await server.request('POST', `/projects${query ? `?${query}` : ''}`, {
      token: alice.token,
      ...options,
    });
    expect(response.status, response.text).toBe(201);
    const project = response.body as ProjectBody;
    expect(project).toMatchObject({ name, path: name, visibility: 'internal', issues_enabled: false });
  });

  it('reads multipart form fields', async () => {
    const alice = await server.factories.user();
    const form = new FormData();
    form.set('name', 'multipart-project');
    form.set('topics[]', 'one');
    form.append('topics[]', 'two');
    const response = await fetch(`${server.api}/projects`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': alice.token },
      body: form,
    });
    const project = (await response.json()) as ProjectBody;
    expect(response.status).toBe(201);
    expect(project.topics).toEqual(['one', 'two']);
  });

  it('reads bracket arrays from a form', async () => {
    const alice = await server.factories.user();
    const response = await server.request('POST', '/projects', {
      token: alice.token,
      body: 'name=bracketed&topics[]=a&topics[]=b',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status, response.text).toBe(201);
    expect((response.body as ProjectBody).topics).toEqual(['a', 'b']);
  });

  it('lets the path parameter win over a parameter of the same name', async () => {
    const alice = await server.factories.user();
    const project = await server.factories.project({ owner: alice });
    const response = await server.request('GET', `/projects/${project.id}?id=999999`, { token: alice.token });
    expect(response.status).toBe(200);
    expect((response.body as ProjectBody).id).toBe(project.id);
  });

  it.each([['true'], ['True'], ['1'], ['t']])('coerces %s to a boolean in the query', async (value) => {
    const alice = await server.factories.user();
    await server.factories.project({ owner: alice });
    const response = await server.request('GET', `/projects?owned=${value}&simple=${value}`, {
      token: alice.token,
    });
    expect(response.status).toBe(200);
    expect((response.body as object[]).length).toBe(1);
    expect(Object.keys((response.body as object[])[0])).not.toContain('permissions');
  });
});

describe(':id as an integer or an encoded full path', () => {
  it.each([
    ['integer', (p: { id: number }) => String(p.id)],
    ['encoded path', (_p: unknown, full: string) => encodeURIComponent(full)],
    ['encoded path, other case', (_p: unknown, full: string) => encodeURIComponent(full.toUpperCase())],
  ])('%s', async (_name, idOf) => {
    const alice = await server.factories.user();
    const group = await server.factories.group();
    const sub = await server.factories.group({ parent: group });
    await server.factories.member(group, alice.user, 50);
    const project = await server.factories.project({ owner: alice, namespace: sub, path: 'deep-project' });
    const full = `${sub.fullPath}/deep-project`;
    const response = await server.request('GET', `/projects/${idOf(project, full)}`, { token: alice.token });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({ id: project.id, path_with_namespace: full });
  });

  it('does not route a decoded slash', async () => {
    const response = await send(`${server.api}/projects/a/b`, 'GET');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: '404 Not Found' });
  });
});

describe('responses', () => {
  it('are exactly application/json', async () => {
    const response = await server.request('GET', '/projects');
    expect(response.headers.get('content-type')).toBe('application/json');
  });

  it('echo a request id', async () => {
    const response = await server.request('GET', '/projects', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(response.headers.get('x-request-id')).toBe('abc-123');
    const generated = await server.request('GET', '/projects');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('write datetimes in UTC with milliseconds', async () => {
    const alice = await server.factories.user();
    const project = await server.factories.project({ owner: alice });
    const response = await server.request('GET', `/projects/${project.id}`, { token: alice.token });
    expect((response.body as { created_at: string }).created_at).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    );
  });
});

describe('error shapes', () => {
  it.each([
    ['unknown route', 'GET', '/no-such-thing', undefined, 404, { error: '404 Not Found' }],
    [
      'unknown method on a known path',
      'DELETE',
      '/projects',
      undefined,
      405,
      { message: '405 Method Not Allowed' },
    ],
    [
      'missing parameter',
      'POST',
      '/projects',
      {},
      400,
      { error: 'name, path are missing, at least one parameter must be provided' },
    ],
    [
      'invalid enum',
      'POST',
      '/projects',
      { name: 'x', visibility: 'secret' },
      400,
      { error: 'visibility does not have a valid value' },
    ],
    [
      'invalid type',
      'POST',
      '/projects',
      { name: 'x', namespace_id: 'abc' },
      400,
      { error: 'namespace_id is invalid' },
    ],
    ['missing project', 'GET', '/projects/999999', undefined, 404, { message: '404 Project Not Found' }],
  ])('%s', async (_name, method, path, json, status, body) => {
    const alice = await server.factories.user();
    const response = await server.request(method, path, { token: alice.token, json });
    expect(response.status).toBe(status);
    expect(response.body).toEqual(body);
  });

  it('answers an invalid query value with its name', async () => {
    const response = await server.request('GET', '/projects?order_by=colour&page=abc');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'order_by does not have a valid value, page is invalid' });
  });

  it('answers malformed JSON with 400', async () => {
    const alice = await server.factories.user();
    const response = await server.request('POST', '/projects', {
      token: alice.token,
      body: '{"name":',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'body is not valid JSON' });
  });

  it('answers a record validation failure with the attribute', async () => {
    const alice = await server.factories.user();
    await server.request('POST', '/projects', { token: alice.token, json: { name: 'Twice' } });
    const response = await server.request('POST', '/projects', {
      token: alice.token,
      json: { name: 'Twice' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: { path: ['has already been taken'], name: ['has already been taken'] },
    });
  });
});

describe('authentication', () => {
  it.each([
    ['PRIVATE-TOKEN header', (t: string) => ({ headers: { 'PRIVATE-TOKEN': t } })],
    ['Bearer', (t: string) => ({ headers: { Authorization: `Bearer ${t}` } })],
    ['private_token query', (t: string) => ({ query: `?private_token=${t}` })],
  ])('accepts %s', async (_how, credentials) => {
    const alice = await server.factories.user();
    const project = await server.factories.project({ owner: alice, visibility: 'private' });
    const { headers, query } = credentials(alice.token) as {
      headers?: Record<string, string>;
      query?: string;
    };
    const response = await server.request('GET', `/projects/${project.id}${query ?? ''}`, { headers });
    expect(response.status).toBe(200);
  });

  it('answers a bad token with 401 even where anonymous reads are allowed', async () => {
    const project = await server.factories.project({ visibility: 'public' });
    const response = await server.request('GET', `/projects/${project.id}`, { token: 'glpat-unknown' });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ message: '401 Unauthorized' });
  });

  it.each([
    ['an unknown token', 'glpat-unknown'],
    ['no token, where one is required', undefined],
  ])('answers %s with 401', async (_name, token) => {
    const response = await server.request('POST', '/projects', { token, json: { name: 'x' } });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ message: '401 Unauthorized' });
  });

  it('answers an expired or revoked token with 401', async () => {
    const alice = await server.factories.user();
    const expired = await server.services.users.createToken(alice.user.id, {
      name: 'old',
      scopes: ['api'],
      expiresAt: '2020-01-01',
    });
    const revoked = await server.services.users.createToken(alice.user.id, { name: 'gone', scopes: ['api'] });
    await server.dataSource.query('UPDATE personal_access_tokens SET revoked = true WHERE id = $1', [
      revoked.record.id,
    ]);
    for (const token of [expired.token, revoked.token]) {
      const response = await server.request('GET', '/projects', { token });
      expect(response.status).toBe(401);
    }
  });

  it('answers a blocked user with 401', async () => {
    const blocked = await server.factories.user({ state: 'blocked' });
    expect((await server.request('GET', '/projects', { token: blocked.token })).status).toBe(401);
  });
});

describe('empty and trivial bodies', () => {
  it.each([
    ['GET with a JSON content type and no body', 'GET', 'application/json', ''],
    ['GET with {}', 'GET', 'application/json', '{}'],
    ['GET with an empty form', 'GET', 'application/x-www-form-urlencoded', ''],
    ['GET with whitespace', 'GET', 'application/json', '  \n'],
  ])('%s', async (_name, method, contentType, body) => {
    const response = await sendRaw(`${server.api}/projects`, method, { 'Content-Type': contentType }, body);
    expect(response.status).toBe(200);
  });

  it('answers HEAD like GET, without a body', async () => {
    const response = await fetch(`${server.api}/projects`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });
});
