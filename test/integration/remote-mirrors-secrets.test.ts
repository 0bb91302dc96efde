/**
 * A mirror's password never leaks: against the built server (its real log on stdout, at debug level),
 * every response about mirrors, refused ones included, every `last_error` of a failing mirror, every
 * log line and the database row are searched for it. The server runs without
 * FORGE_ALLOW_LOCAL_REQUESTS, so local addresses are refused as GitLab refuses them.
 */
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createProcessDatabaseUrl } from '../helpers/database.js';
import { SERVER_ENTRY, serverPort, startServerProcess } from '../helpers/process.js';

const children: ChildProcess[] = [];
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-mirror-secrets-'));
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

type Json = Record<string, unknown>;

describe.runIf(fs.existsSync(SERVER_ENTRY))('remote mirror secrets', () => {
  it(
    'never appear in a response, a last_error, a log line or the database',
    { timeout: 120_000 },
    async () => {
      const rootToken = `glpat-root-${crypto.randomBytes(12).toString('hex')}`;
      const port = String(serverPort());
      const databaseUrl = await createProcessDatabaseUrl();
      const server = startServerProcess(
        {
          ...process.env,
          PORT: port,
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          DATABASE_URL: databaseUrl,
          FORGE_ROOT_TOKEN: rootToken,
          FORGE_SECRET_KEY: crypto.randomBytes(16).toString('hex'),
          FORGE_JOB_POLL: '0.5',
          LOG_LEVEL: 'debug',
        },
        children,
      );
      let output = await server.ready;
      server.child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      server.child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));

      const password = `S3cr3t-${crypto.randomBytes(9).toString('hex')}`;
      const user = `bot-${crypto.randomBytes(4).toString('hex')}`;
      const seen: string[] = [];
      const call = async (method: string, route: string, json?: unknown) => {
        const response = await fetch(`http://127.0.0.1:${port}/api/v4${route}`, {
          method,
          headers: { 'PRIVATE-TOKEN': rootToken, ...(json ? { 'Content-Type': 'application/json' } : {}) },
          body: json ? JSON.stringify(json) : undefined,
        });
        const text = await response.text();
        seen.push(`${method} ${route} ${response.status}\n${[...response.headers].join('\n')}\n${text}`);
        return { status: response.status, body: (text ? JSON.parse(text) : null) as Json };
      };

      const project = await call('POST', '/projects', { name: 'mirrored', initialize_with_readme: true });
      expect(project.status).toBe(201);
      const route = `/projects/${project.body.id as number}/remote_mirrors`;
      const withCredentials = (host: string, scheme = 'https') =>
        `${scheme}://${user}:${password}@${host}/x.git`;

      // Refusals, as GitLab words them: the scheme, then local addresses (the setting is off here).
      const refusals: Array<[string, string]> = [
        [withCredentials('example.com', 'ftp'), 'is blocked: Only allowed schemes are http, https, ssh, git'],
        [withCredentials('127.0.0.1:8080'), 'is blocked: Requests to localhost are not allowed'],
        [withCredentials('localhost'), 'is blocked: Requests to localhost are not allowed'],
        [withCredentials('[::1]'), 'is blocked: Requests to localhost are not allowed'],
        [withCredentials('10.1.2.3'), 'is blocked: Requests to the local network are not allowed'],
        [withCredentials('192.168.0.7'), 'is blocked: Requests to the local network are not allowed'],
        [
          withCredentials('169.254.169.254'),
          'is blocked: Requests to the link local network are not allowed',
        ],
      ];
      for (const [url, message] of refusals) {
        const refused = await call('POST', route, { url, enabled: true });
        expect(refused, url).toMatchObject({ status: 400, body: { message: { url: [message] } } });
      }

      // A mirror that fails for real: its host never resolves, so each attempt logs and records an error.
      const mirror = await call('POST', route, { url: withCredentials('mirror.invalid'), enabled: true });
      expect(mirror.status).toBe(201);
      expect(mirror.body.url).toBe('https://*****:*****@mirror.invalid/x.git');
      const mirrorRoute = `${route}/${mirror.body.id as number}`;
      expect((await call('POST', `${mirrorRoute}/sync`)).status).toBe(204);
      const deadline = Date.now() + 60_000;
      let state = (await call('GET', mirrorRoute)).body;
      while (state.update_status !== 'to_retry' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        state = (await call('GET', mirrorRoute)).body;
      }
      expect(state.update_status).toBe('to_retry');
      expect(state.last_error).toMatch(/mirror\.invalid/);
      await call('GET', route);
      await call('PUT', mirrorRoute, { only_protected_branches: true });
      await call('GET', `${mirrorRoute}/public_key`);
      // The failure reached the log, as a line of its own.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(output).toContain('remote mirror update failed');

      for (const secret of [password, encodeURIComponent(password), user]) {
        for (const response of seen) expect(response, 'a response').not.toContain(secret);
        expect(output, 'the log').not.toContain(secret);
      }

      // On PGlite the server keeps the database to itself; the unit of encryption is checked in-process
      // by remote-mirrors.test.ts.
      if (!databaseUrl) return;
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        const rows = await client.query('SELECT * FROM remote_mirrors');
        expect(rows.rows).toHaveLength(1);
        expect(JSON.stringify(rows.rows)).not.toContain(password);
        expect(JSON.stringify(rows.rows)).not.toContain(user);
      } finally {
        await client.end();
      }
    },
  );
});
