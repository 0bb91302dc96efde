/**
 * The built server as its own process, sent every request that once crashed it or could: after each,
 * the process is still up, a normal request works, and nothing reached the last-resort handler.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_ENTRY, serverPort, startServerProcess } from '../helpers/process.js';
import { sendRaw } from '../helpers/server.js';

const ROOT_TOKEN = 'glpat-crash-test-root-token';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-crash-'));
const children: ChildProcess[] = [];
const port = serverPort();
const base = `http://127.0.0.1:${port}`;
let server: ChildProcess;
let output = '';

const GARBAGE_GZIP = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from('garbage')]);
const auth = { 'PRIVATE-TOKEN': ROOT_TOKEN };

/** Sends bytes as they are, on a connection of their own; resolves when the server answers or hangs up. */
function rawExchange(request: Buffer | string, waitMs = 5000): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let received = '';
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (/\r\n\r\n/.test(received)) socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

const CASES: Array<[string, () => Promise<unknown>]> = [
  [
    'GET with a corrupt gzip multipart body and no token',
    () =>
      sendRaw(
        `${base}/api/v4/projects`,
        'GET',
        { 'Content-Type': 'multipart/form-data; boundary=X', 'Content-Encoding': 'gzip' },
        GARBAGE_GZIP,
      ),
  ],
  [
    'POST with a corrupt gzip JSON body',
    () =>
      sendRaw(
        `${base}/api/v4/projects`,
        'POST',
        { ...auth, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
        GARBAGE_GZIP,
      ),
  ],
  [
    'PUT with a corrupt deflate multipart body',
    () =>
      sendRaw(
        `${base}/api/v4/projects/1`,
        'PUT',
        { ...auth, 'Content-Type': 'multipart/form-data; boundary=X', 'Content-Encoding': 'deflate' },
        Buffer.from('not deflate'),
      ),
  ],
  [
    'the internal git hook route with a corrupt gzip body',
    () =>
      sendRaw(
        `${base}/-/internal/git/pre-receive`,
        'POST',
        { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
        GARBAGE_GZIP,
      ),
  ],
  [
    'a git push with a corrupt gzip body',
    () =>
      sendRaw(
        `${base}/root/crash.git/git-receive-pack`,
        'POST',
        {
          Authorization: `Basic ${Buffer.from(`root:${ROOT_TOKEN}`).toString('base64')}`,
          'Content-Type': 'application/x-git-receive-pack-request',
          'Content-Encoding': 'gzip',
        },
        GARBAGE_GZIP,
      ),
  ],
  [
    'a truncated multipart body',
    () =>
      sendRaw(
        `${base}/api/v4/projects`,
        'POST',
        { ...auth, 'Content-Type': 'multipart/form-data; boundary=X' },
        '--X\r\nContent-Disposition: form-data; name="name"\r\n\r\nhalf',
      ),
  ],
  [
    'a multipart body without a boundary',
    () => sendRaw(`${base}/api/v4/projects`, 'POST', { ...auth, 'Content-Type': 'multipart/form-data' }, 'x'),
  ],
  [
    '100,000 levels of brackets',
    () =>
      sendRaw(
        `${base}/api/v4/projects`,
        'POST',
        { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' },
        `a${'[a]'.repeat(100_000)}=1`,
      ),
  ],
  [
    '100,000 levels of JSON',
    () =>
      sendRaw(
        `${base}/api/v4/projects`,
        'POST',
        { ...auth, 'Content-Type': 'application/json' },
        `{"name":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      ),
  ],
  [
    'a 1 MB branch name',
    () =>
      sendRaw(
        `${base}/api/v4/projects/root%2Fcrash/repository/branches`,
        'POST',
        { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' },
        `branch=${'b'.repeat(1 << 20)}&ref=main`,
      ),
  ],
  [
    'NUL and broken escapes in the path',
    () => rawExchange('GET /api/v4/projects/%00%zz%ff HTTP/1.1\r\nHost: x\r\n\r\n'),
  ],
  ['a raw NUL byte in the request line', () => rawExchange('GET /api/v4/\0 HTTP/1.1\r\nHost: x\r\n\r\n')],
  [
    'a NUL byte in a header',
    () => rawExchange('GET /api/v4/version HTTP/1.1\r\nHost: x\r\nSudo: a\0b\r\n\r\n'),
  ],
  ['not HTTP at all', () => rawExchange(Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x00, 0x00]))],
  [
    'headers of 1 MB',
    () => rawExchange(`GET /api/v4/version HTTP/1.1\r\nHost: x\r\nX: ${'x'.repeat(1 << 20)}\r\n\r\n`),
  ],
  [
    'a client that hangs up mid-body',
    () =>
      rawExchange(
        'POST /api/v4/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"na',
        200,
      ),
  ],
  [
    'a chunked body that breaks its own framing',
    () =>
      rawExchange(
        `POST /api/v4/projects HTTP/1.1\r\nHost: x\r\nPRIVATE-TOKEN: ${ROOT_TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      ),
  ],
];

beforeAll(async () => {
  const started = startServerProcess(
    {
      ...process.env,
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      FORGE_ROOT_TOKEN: ROOT_TOKEN,
      FORGE_BODY_TIMEOUT: '2',
    },
    children,
  );
  server = started.child;
  server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await started.ready;
  const created = await fetch(`${base}/api/v4/projects`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'crash', initialize_with_readme: true }),
  });
  expect(created.status).toBe(201);
}, 90_000);

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe.runIf(fs.existsSync(SERVER_ENTRY))('no request takes the process down', () => {
  it.each(CASES)('%s, then a normal request', async (_name, send) => {
    await send().catch(() => undefined);
    expect(server.exitCode).toBeNull();
    const next = await fetch(`${base}/api/v4/projects/root%2Fcrash`, { headers: auth });
    expect(next.status).toBe(200);
  });

  it('logged no uncaught error and no 500', () => {
    expect(output).not.toMatch(/uncaught exception|unhandled rejection|request failed/);
  });
});
