/** Bodies no client should send must not take the server down: each gets 400, and the next request works. */
import { describe, expect, it } from 'vitest';
import { sendRaw, useTestServer } from '../helpers/server.js';

const server = useTestServer();

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
