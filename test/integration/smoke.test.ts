import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

describe('smoke', () => {
  it('creates and reads a project', async () => {
    const alice = await server.factories.user();
    const created = await server.request('POST', '/projects', { token: alice.token, json: { name: 'My Project' } });
    expect(created.status, created.text).toBe(201);
    const got = await server.request('GET', `/projects/${(created.body as { id: number }).id}`, { token: alice.token });
    expect(got.status, got.text).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/json');
    const list = await server.request('GET', '/projects', { token: alice.token });
    expect(list.status, list.text).toBe(200);
  });
});
