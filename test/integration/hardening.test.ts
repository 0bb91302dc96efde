/**
 * Input no client should send never takes the server down or gets a 500: each case is refused once, in
 * the shared mechanism, with GitLab's status and shape, and the next request works.
 */
import net from 'node:net';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sendRaw, useTestServer } from '../helpers/server.js';

const BODY_TIMEOUT_SECONDS = 2;
const server = useTestServer({ env: { FORGE_BODY_TIMEOUT: String(BODY_TIMEOUT_SECONDS) } });

const sendBytes = async (method: string, path: string, headers: Record<string, string>, body: Buffer) => {
  const response = await sendRaw(`${server.api}${path}`, method, headers, body);
  return { status: response.status, text: response.body };
};

const GARBAGE_GZIP = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from('garbage')]);
const GARBAGE = Buffer.from('not deflate at all');

describe('corrupt compressed bodies', () => {
  it.each([
    ['GET', '/projects', 'multipart/form-data; boundary=X', 'gzip', GARBAGE_GZIP],
    ['GET', '/projects', 'application/json', 'gzip', GARBAGE_GZIP],
    ['POST', '/projects', 'application/json', 'gzip', GARBAGE_GZIP],
    ['POST', '/projects', 'application/x-www-form-urlencoded', 'deflate', GARBAGE],
    ['PUT', '/projects/1', 'multipart/form-data; boundary=X', 'deflate', GARBAGE],
  ])(
    '%s %s as %s with a bad %s body answers 400, and the server goes on',
    async (method, path, type, encoding, body) => {
      const { token } = await server.factories.user({ admin: true });
      const response = await sendBytes(
        method,
        path,
        { 'Content-Type': type, 'Content-Encoding': encoding, 'PRIVATE-TOKEN': token },
        body,
      );
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text)).toEqual({ error: expect.any(String) });
      const next = await server.request('GET', '/projects', { token });
      expect(next.status).toBe(200);
    },
  );

  it('reads a valid gzip JSON body', async () => {
    const { token } = await server.factories.user();
    const zlib = await import('node:zlib');
    const response = await sendBytes(
      'POST',
      '/projects',
      { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'PRIVATE-TOKEN': token },
      zlib.gzipSync(JSON.stringify({ name: 'zipped' })),
    );
    expect(response.status).toBe(201);
    expect(JSON.parse(response.text)).toMatchObject({ name: 'zipped' });
  });
});

describe('secrets in the query string', () => {
  it('never come back in pagination links', async () => {
    const owner = await server.factories.user();
    await server.factories.project({ owner });
    await server.factories.project({ owner });
    const response = await server.request(
      'GET',
      `/projects?owned=true&per_page=1&private_token=${owner.token}`,
    );
    expect(response.status).toBe(200);
    const link = response.headers.get('link') ?? '';
    expect(link).toContain('rel="next"');
    expect(link).toContain('per_page=1');
    expect(link).not.toContain(owner.token);
    expect(link).not.toContain('private_token');
  });
});

describe('malformed percent escapes in the path', () => {
  it.each(['/api/v4/projects/%zz', '/api/v4/projects/%ff%fe', '/%zz.git/info/refs?service=git-upload-pack'])(
    '%s answers 400, never 500',
    async (path) => {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: expect.stringContaining('400 Bad Request') });
    },
  );

  it('still serves an escaped percent sign', async () => {
    const response = await fetch(`${server.api}/projects/no%25such`);
    expect(response.status).toBe(404);
  });
});

/** The path exactly as given (no URL normalisation), with a token. */
const rawGet = async (path: string, token: string, headers: Record<string, string> = {}) => {
  const response = await sendRaw(`${server.api}${path}`, 'GET', { 'PRIVATE-TOKEN': token, ...headers }, '');
  return { status: response.status, body: JSON.parse(response.body) as unknown };
};

describe("integers beyond the columns' range", () => {
  it.each([
    ['/projects/2147483648', 404, { message: '404 Project Not Found' }],
    ['/projects/99999999999999999999', 404, { message: '404 Project Not Found' }],
    ['/groups/2147483648', 404, { message: '404 Group Not Found' }],
    ['/users/2147483648', 404, { message: '404 Not found' }],
    ['/users/99999999999999999999', 404, { message: '404 Not found' }],
    ['/projects?page=2147483648', 400, { error: 'page is invalid' }],
    ['/projects?page=1e308', 400, { error: 'page is invalid' }],
    ['/projects?page=Infinity', 400, { error: 'page is invalid' }],
    ['/projects?per_page=1e308', 400, { error: 'per_page is invalid' }],
    ['/projects?id_after=2147483648', 400, { error: 'id_after is invalid' }],
    ['/users/-2147483649', 404, { message: '404 Not found' }],
    // Text that is no integer, though a lax reader would take it for one.
    ['/users/1e3', 400, { error: 'id is invalid' }],
    ['/users/0x10', 400, { error: 'id is invalid' }],
    ['/users/%20', 400, { error: 'id is invalid' }],
    ['/projects?page=1e3', 400, { error: 'page is invalid' }],
    ['/projects?page=%20&per_page=0x10', 400, { error: 'page is invalid, per_page is invalid' }],
  ])('%s answers %i', async (path, status, body) => {
    const { token } = await server.factories.user({ admin: true });
    expect(await rawGet(path, token)).toEqual({ status, body });
  });

  it.each(['2147483648'])('a form user_id of %s adds no member: 404 User Not Found', async (userId) => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const response = await sendRaw(
      `${server.api}/projects/${project.id}/members`,
      'POST',
      { 'Content-Type': 'application/x-www-form-urlencoded', 'PRIVATE-TOKEN': owner.token },
      `user_id=${userId}&access_level=30`,
    );
    expect({ status: response.status, body: JSON.parse(response.body) }).toEqual({
      status: 404,
      body: { message: '404 User Not Found' },
    });
  });

  it('a fork into namespace_id -2147483649, beyond the column, is refused by validation', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const response = await server.request('POST', `/projects/${project.id}/fork`, {
      token: owner.token,
      json: { namespace_id: -2147483649, path: 'nowhere' },
    });
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: { error: 'namespace_id is invalid' },
    });
  });

  it.each([-2147483648, 0])('a fork into namespace_id %i goes nowhere: 404', async (namespaceId) => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const response = await server.request('POST', `/projects/${project.id}/fork`, {
      token: owner.token,
      json: { namespace_id: namespaceId, path: 'nowhere' },
    });
    expect({ status: response.status, body: response.body }).toEqual({
      status: 404,
      body: { message: '404 Target Namespace Not Found' },
    });
  });

  it('a Sudo of 2147483648 names no user', async () => {
    const admin = await server.factories.user({ admin: true });
    const token = await server.factories.token(admin.user, ['api', 'sudo']);
    expect(await rawGet('/user', token, { Sudo: '2147483648' })).toEqual({
      status: 404,
      body: { message: "404 User with ID or username '2147483648' Not Found" },
    });
  });

  it('the contract states the bounds of ids and pages', async () => {
    const { loadSpec } = await import('../../src/core/contract.js');
    const parameters = (loadSpec().components?.parameters ?? {}) as Record<string, { schema: object }>;
    expect(parameters.Page.schema).toMatchObject({ maximum: 2147483647 });
    expect(parameters.PerPage.schema).toMatchObject({ maximum: 2147483647 });
    expect(parameters.ProjectId.schema).toMatchObject({
      anyOf: [{ type: 'integer', maximum: 2147483647 }, {}],
    });
  });
});

describe('NUL, lone surrogates and invalid UTF-8', () => {
  const malformed = { error: expect.stringMatching(/^400 Bad Request - /) };

  it.each([
    ['a NUL in a query value', '/projects?search=%00'],
    ['an encoded surrogate in a query value', '/projects?search=%ed%a0%80'],
    ['invalid UTF-8 in a query value', '/projects?search=%ff%fe'],
    ['invalid UTF-8 in a query name', '/projects?%ff=1'],
    ['a broken escape in a query value', '/projects?search=%zz'],
    ['a NUL in a path segment', '/projects/1/repository/branches/a%00b'],
    ['invalid UTF-8 in a path segment', '/projects/1/repository/branches/%c3%28'],
  ])('%s answers 400', async (_name, path) => {
    const { token } = await server.factories.user({ admin: true });
    expect(await rawGet(path, token)).toEqual({ status: 400, body: malformed });
  });

  it('a NUL in the Sudo header answers 400', async () => {
    const admin = await server.factories.user({ admin: true });
    const token = await server.factories.token(admin.user, ['api', 'sudo']);
    const response = await sendRaw(
      `${server.api}/user`,
      'GET',
      { 'PRIVATE-TOKEN': token, Sudo: Buffer.from([0xff, 0xfe]).toString('latin1') },
      '',
    );
    expect(response.status).toBe(400);
  });

  it.each([
    ['JSON with \\u0000', 'application/json', '{"description":"a\\u0000b"}'],
    ['JSON with a lone surrogate', 'application/json', '{"description":"a\\ud800b"}'],
    ['JSON with a NUL in a key', 'application/json', '{"a\\u0000":"b"}'],
    [
      'JSON with invalid UTF-8',
      'application/json',
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    ],
    ['a form with %ff', 'application/x-www-form-urlencoded', 'description=a%ffb'],
    ['a form with %00', 'application/x-www-form-urlencoded', 'description=a%00b'],
    [
      'multipart with invalid UTF-8',
      'multipart/form-data; boundary=X',
      Buffer.concat([
        Buffer.from('--X\r\nContent-Disposition: form-data; name="description"\r\n\r\na'),
        Buffer.from([0xff]),
        Buffer.from('b\r\n--X--\r\n'),
      ]),
    ],
  ])('a body of %s answers 400 and changes nothing', async (_name, type, body) => {
    const { owner, project } = await server.factories.ownedProjectWithReadme({ description: 'before' });
    const response = await sendRaw(
      `${server.api}/projects/${project.id}`,
      'PUT',
      { 'Content-Type': type, 'PRIVATE-TOKEN': owner.token },
      body,
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toEqual(malformed);
    const after = await server.request('GET', `/projects/${project.id}`, { token: owner.token });
    expect(after.body).toMatchObject({ description: 'before' });
  });

  it('accepts UTF-8 text in every form', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const multipart = Buffer.from(
      '--X\r\nContent-Disposition: form-data; name="description"\r\n\r\ncafé 😀\r\n--X--\r\n',
    );
    const response = await sendRaw(
      `${server.api}/projects/${project.id}`,
      'PUT',
      { 'Content-Type': 'multipart/form-data; boundary=X', 'PRIVATE-TOKEN': owner.token },
      multipart,
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ description: 'café 😀' });
    const search = await rawGet('/projects?search=caf%C3%A9', owner.token);
    expect(search.status).toBe(200);
  });
});

describe('deeply nested parameters', () => {
  it.each([
    ['a query', 'GET', '/projects?', ''],
    ['a form body', 'POST', '/projects', 'application/x-www-form-urlencoded'],
  ])('100,000 levels of brackets in %s answer 400', async (_name, method, path, type) => {
    const { token } = await server.factories.user();
    const nested = `a${'[a]'.repeat(100_000)}=1`;
    const response =
      method === 'GET'
        ? await sendRaw(
            `${server.api}${path}${nested.slice(0, 12_000)}`,
            method,
            { 'PRIVATE-TOKEN': token },
            '',
          )
        : await sendRaw(
            `${server.api}${path}`,
            method,
            { 'Content-Type': type, 'PRIVATE-TOKEN': token },
            nested,
          );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toEqual({ error: '400 Bad Request - parameters nested too deeply' });
  });

  it('100,000 levels of JSON answer 400', async () => {
    const { token } = await server.factories.user();
    const body = `{"name":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const response = await sendRaw(
      `${server.api}/projects`,
      'POST',
      { 'Content-Type': 'application/json', 'PRIVATE-TOKEN': token },
      body,
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toEqual({ error: '400 Bad Request - parameters nested too deeply' });
  });
});

describe('values git refuses', () => {
  const huge = 'b'.repeat(1 << 20);

  it('a 1 MB branch name answers 400 when creating a branch', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const response = await sendRaw(
      `${server.api}/projects/${project.id}/repository/branches`,
      'POST',
      { 'Content-Type': 'application/x-www-form-urlencoded', 'PRIVATE-TOKEN': owner.token },
      `branch=${huge}&ref=main`,
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toEqual({ message: 'Branch name is invalid' });
  });

  it('a 1 MB branch name answers 400 when committing', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const response = await server.request('POST', `/projects/${project.id}/repository/commits`, {
      token: owner.token,
      json: {
        branch: huge,
        start_branch: 'main',
        commit_message: 'x',
        actions: [{ action: 'create', file_path: 'a', content: 'b' }],
      },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ message: expect.stringContaining(': Branch name is invalid') });
  });

  it('a 1 MB author name answers 400 when committing', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const response = await server.request('POST', `/projects/${project.id}/repository/commits`, {
      token: owner.token,
      json: {
        branch: 'main',
        commit_message: 'x',
        author_name: huge,
        author_email: 'a@example.com',
        actions: [{ action: 'create', file_path: 'a', content: 'b' }],
      },
    });
    expect(response.status).toBe(400);
  });

  it.each(['.', ' .. ', '<>', ';'])(
    'an author name git cannot write (%j) answers 400',
    async (authorName) => {
      const { owner, project } = await server.factories.ownedProjectWithReadme();
      const response = await server.request('POST', `/projects/${project.id}/repository/commits`, {
        token: owner.token,
        json: {
          branch: 'main',
          commit_message: 'x',
          author_name: authorName,
          author_email: 'a@example.com',
          actions: [{ action: 'create', file_path: 'a', content: 'b' }],
        },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ message: 'Commit author name consists only of disallowed characters' });
    },
  );

  it('an 8,000-character ref in a query answers 404 like any ref that does not exist', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const tree = await sendRaw(
      `${server.api}/projects/${project.id}/repository/tree?ref=${'r'.repeat(8000)}`,
      'GET',
      { 'PRIVATE-TOKEN': owner.token },
      '',
    );
    expect(tree.status).toBe(404);
  });

  it.each([
    ['empty', ''],
    ['300 characters', 'x'.repeat(300)],
    ['a newline', 'a\nb'],
    ['a branch that does not exist', 'nowhere'],
  ])('a default_branch that is %s answers 400 on update, and changes nothing', async (_name, name) => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const response = await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: { default_branch: name },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: `Could not set the default branch. Do you have a branch named '${name}' in your repository?`,
    });
    const after = await server.request('GET', `/projects/${project.id}`, { token: owner.token });
    expect(after.body).toMatchObject({ default_branch: 'main' });
  });

  it('a default_branch that exists moves HEAD', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    await server.request('POST', `/projects/${project.id}/repository/branches`, {
      token: owner.token,
      json: { branch: 'develop', ref: 'main' },
    });
    const response = await server.request('PUT', `/projects/${project.id}`, {
      token: owner.token,
      json: { default_branch: 'develop' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ default_branch: 'develop' });
    const head = await server.request('GET', `/projects/${project.id}/repository/files/README.md?ref=HEAD`, {
      token: owner.token,
    });
    expect(head.status).toBe(200);
  });

  it.each([
    ['300 characters', 'x'.repeat(300)],
    ['a newline', 'a\nb'],
    ['`..`', 'a..b'],
  ])('a default_branch of %s answers 400 on create, and creates nothing', async (_name, name) => {
    const { token } = await server.factories.user();
    const path = `defaults-${Date.now()}`;
    const response = await server.request('POST', '/projects', {
      token,
      json: { path, default_branch: name, initialize_with_readme: true },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ message: { default_branch: ['is invalid'] } });
    const owned = await server.request('GET', '/projects?owned=true', { token });
    expect(owned.body).toEqual([]);
  });

  it('a blank default_branch on create is the instance default', async () => {
    const { token } = await server.factories.user();
    const response = await server.request('POST', '/projects', {
      token,
      json: { path: `blank-default-${Date.now()}`, default_branch: '', initialize_with_readme: true },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ default_branch: 'main' });
  });

  it.each([
    ['tree', '/repository/tree?path=../..', 'path'],
    ['tree', '/repository/tree?path=a/../../b', 'path'],
    ['commits', '/repository/commits?path=../..', 'path'],
    ['commits', '/repository/commits?path=%2e%2e/x', 'path'],
    ['files', '/repository/files/..%2F..%2Fetc%2Fpasswd?ref=main', 'file_path'],
    ['archive', '/repository/archive?path=../x', 'path'],
  ])('a relative path out of the repository in %s (%s) answers 400', async (_name, suffix, param) => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    expect(await rawGet(`/projects/${project.id}${suffix}`, owner.token)).toEqual({
      status: 400,
      body: { error: `${param} should be a valid file path` },
    });
  });
});

describe('contention', () => {
  it('20 concurrent API commits to one branch all land, in some order', async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        server.request('POST', `/projects/${project.id}/repository/commits`, {
          token: owner.token,
          json: {
            branch: 'main',
            commit_message: `commit ${i}`,
            actions: [{ action: 'create', file_path: `file-${i}.txt`, content: String(i) }],
          },
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    const tree = await server.request('GET', `/projects/${project.id}/repository/tree?per_page=100`, {
      token: owner.token,
    });
    const names = (tree.body as Array<{ name: string }>).map((entry) => entry.name);
    for (let i = 0; i < 20; i++) expect(names).toContain(`file-${i}.txt`);
    const commits = await server.request('GET', `/projects/${project.id}/repository/commits?per_page=100`, {
      token: owner.token,
    });
    expect(commits.body).toHaveLength(21);
  });

  it("a concurrent commit that conflicts still fails with GitLab's message", async () => {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const responses = await Promise.all(
      [1, 2].map((i) =>
        server.request('POST', `/projects/${project.id}/repository/commits`, {
          token: owner.token,
          json: {
            branch: 'main',
            commit_message: `same file ${i}`,
            actions: [{ action: 'create', file_path: 'same.txt', content: String(i) }],
          },
        }),
      ),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(responses.find((r) => r.status === 400)!.body).toEqual({
      message: expect.stringContaining('already exists'),
    });
  });
});

describe('bodies too large', () => {
  it.each([
    ['a JSON body', 'application/json', undefined, () => Buffer.from(`{"name":"${'a'.repeat(11 << 20)}"}`)],
    [
      'a gzip body that inflates beyond the limit',
      'application/json',
      'gzip',
      () => zlib.gzipSync(Buffer.from(`{"name":"${'a'.repeat(11 << 20)}"}`)),
    ],
    [
      'a multipart field',
      'multipart/form-data; boundary=X',
      undefined,
      () =>
        Buffer.from(
          `--X\r\nContent-Disposition: form-data; name="name"\r\n\r\n${'a'.repeat(11 << 20)}\r\n--X--\r\n`,
        ),
    ],
  ])('%s over 10 MB answers 413', async (_name, type, encoding, body) => {
    const { token } = await server.factories.user();
    const headers: Record<string, string> = { 'Content-Type': type, 'PRIVATE-TOKEN': token };
    if (encoding) headers['Content-Encoding'] = encoding;
    const response = await sendRaw(`${server.api}/projects`, 'POST', headers, body());
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toEqual({ message: '413 Request Entity Too Large' });
    expect((await server.request('GET', '/user', { token })).status).toBe(200);
  });
});

describe('request bodies that do not arrive', () => {
  it(`an API request announcing 1,000 bytes and sending 8 is dropped within the ${BODY_TIMEOUT_SECONDS} s deadline`, async () => {
    const { token } = await server.factories.user();
    const started = Date.now();
    const closed = await new Promise<string>((resolve) => {
      const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1', () => {
        socket.write(
          `POST /api/v4/projects HTTP/1.1\r\nHost: x\r\nPRIVATE-TOKEN: ${token}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":',
        );
      });
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('close', () => resolve(received));
    });
    const elapsed = Date.now() - started;
    expect(closed).toBe('');
    expect(elapsed).toBeGreaterThanOrEqual(BODY_TIMEOUT_SECONDS * 1000 - 100);
    expect(elapsed).toBeLessThan(BODY_TIMEOUT_SECONDS * 1000 + 3000);
    expect((await server.request('GET', '/user', { token })).status).toBe(200);
  });

  it('headers that never end are dropped within the deadline', async () => {
    const started = Date.now();
    await new Promise<void>((resolve) => {
      const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1', () => {
        socket.write('GET /api/v4/version HTTP/1.1\r\nHost: x\r\n');
      });
      socket.on('data', () => undefined);
      socket.on('close', () => resolve());
    });
    expect(Date.now() - started).toBeLessThan(BODY_TIMEOUT_SECONDS * 1000 + 3000);
  });

  it('headers larger than 16 KB answer 431', async () => {
    const response = await sendRaw(`${server.api}/version`, 'GET', { 'X-Big': 'x'.repeat(20_000) }, '');
    expect(response.status).toBe(431);
  });
});
