/** Remote includes: fetched with a size bound, and refused local addresses, checked where the connection goes. */
import dns from 'node:dns/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchRemote, REMOTE_MAX_BYTES } from '../../src/pipelines/include-sources.js';

let server: http.Server;
let port: number;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/ci.yml') return res.end('job: { script: x }\n');
    if (req.url === '/huge.yml') return res.end('#'.repeat(REMOTE_MAX_BYTES + 1));
    res.statusCode = 404;
    res.end('no');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('fetchRemote', () => {
  it('reads a file where local requests are allowed', async () => {
    expect(await fetchRemote(`http://127.0.0.1:${port}/ci.yml`, true)).toBe('job: { script: x }\n');
  });

  it.each([
    ['an address', () => `http://127.0.0.1:${port}/ci.yml`],
    ['localhost', () => `http://localhost:${port}/ci.yml`],
    // A name (this machine's) that resolves to a local address: refused as the connection looks it up.
    ['a name resolving to one', () => `http://${os.hostname()}:${port}/ci.yml`],
  ])('refuses %s of the local network otherwise', async (_, url) => {
    await expect(fetchRemote(url(), false)).rejects.toThrow(
      /could not be fetched because of: URL is blocked: Requests to (localhost|the local network) are not allowed/,
    );
  });

  it("resolves this machine's name to a local address (what the case above relies on)", async () => {
    const { address } = await dns.lookup(os.hostname());
    expect(address).toMatch(/^(127\.|10\.|172\.|192\.168\.|::1|fe80:|fd)/);
  });

  it('refuses a file over the size bound, and an error status, with GitLab messages', async () => {
    await expect(fetchRemote(`http://127.0.0.1:${port}/huge.yml`, true)).rejects.toThrow(/is too large!$/);
    await expect(fetchRemote(`http://127.0.0.1:${port}/missing.yml`, true)).rejects.toThrow(
      'Remote file could not be fetched because of HTTP code `404` error!',
    );
  });
});
