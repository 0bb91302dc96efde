/**
 * A database that stops answering (issue 9): readiness and the API answer 503 within seconds, never
 * hang, and recover when it is back; a start without a database ends with one line. The built server
 * (`dist/src/main.js`) reaches PostgreSQL through a TCP proxy this test controls.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDataSource } from '../../src/db/data-source.js';
import { databaseModel } from '../../src/families.js';
import { isDatabaseUnavailable } from '../../src/db/errors.js';
import { SERVER_ENTRY, serverPort, startServerProcess } from '../helpers/process.js';
import { databaseUrl, withClient } from '../helpers/template-database.js';

const postgres = process.env.FORGE_TEST_DATABASE_URL;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-db-outage-'));
const children: ChildProcess[] = [];
const token = 'glpat-db-outage-root-token';

/**
 * Forwards to PostgreSQL, or stops: `blackhole` keeps every connection open and answers nothing (a
 * database that hangs, or a network that drops packets), `refuse` closes them (a database that is down).
 */
class DatabaseProxy {
  mode: 'forward' | 'blackhole' | 'refuse' = 'forward';
  readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly held = new WeakSet<net.Socket>();

  constructor(private readonly target: { host: string; port: number }) {
    this.server = net.createServer((client) => this.accept(client));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  private track(socket: net.Socket) {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
  }

  private accept(client: net.Socket) {
    this.track(client);
    if (this.mode === 'refuse') return client.destroy();
    if (this.mode === 'blackhole') return void this.held.add(client);
    const upstream = net.connect(this.target.port, this.target.host);
    this.track(upstream);
    // Bytes in either direction are dropped while the proxy holds the pair.
    client.on('data', (chunk) => this.held.has(client) || upstream.write(chunk));
    upstream.on('data', (chunk) => this.held.has(client) || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  blackhole() {
    this.mode = 'blackhole';
    for (const socket of this.sockets) this.held.add(socket);
  }

  refuse() {
    this.mode = 'refuse';
    for (const socket of this.sockets) socket.destroy();
  }

  forward() {
    this.mode = 'forward';
  }

  close() {
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
  }
}

/** A request with its answer and how long it took; never waits more than `limitMs`. */
async function timed(url: string, limitMs = 15_000) {
  const started = Date.now();
  const response = await fetch(url, {
    headers: { 'PRIVATE-TOKEN': token },
    signal: AbortSignal.timeout(limitMs),
  });
  const text = await response.text();
  return { status: response.status, text, ms: Date.now() - started };
}

async function until(condition: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Runs a built entry point to its end; its exit code and what it wrote to stderr. */
function runToEnd(entry: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [entry], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe.runIf(fs.existsSync(SERVER_ENTRY))('no database at start', () => {
  let silent: net.Server;
  let silentPort: number;
  let closedPort: number;

  beforeAll(async () => {
    // A port that accepts and never answers, and one that nothing listens on.
    silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentPort = (silent.address() as net.AddressInfo).port;
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
  });
  afterAll(() => silent?.close());

  const cases = [
    { entry: 'dist/src/cli/setup.js', prefix: 'forge-api setup failed' },
    { entry: SERVER_ENTRY, prefix: 'forge-api failed to start' },
  ];

  it.each(cases)('$entry ends with one line on stderr and a non-zero exit', async ({ entry, prefix }) => {
    const env = (port: number) => ({
      ...process.env,
      DATA_DIR: dataDir,
      PORT: '0',
      DATABASE_URL: `postgres://forge:s3cret-password@127.0.0.1:${port}/forge`,
      FORGE_DB_CONNECT_TIMEOUT: '1',
    });
    const refused = await runToEnd(entry, env(closedPort));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `${prefix}: cannot reach PostgreSQL at 127.0.0.1:${closedPort}/forge: connection refused (ECONNREFUSED)\n`,
    );
    const started = Date.now();
    const hanging = await runToEnd(entry, env(silentPort));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(hanging.code).toBe(1);
    expect(hanging.stderr).toBe(
      `${prefix}: cannot reach PostgreSQL at 127.0.0.1:${silentPort}/forge: no answer in time\n`,
    );
  });
});

describe.runIf(fs.existsSync(SERVER_ENTRY) && postgres)('PostgreSQL stops answering', () => {
  const database = `forge_outage_${crypto.randomBytes(6).toString('hex')}`;
  const port = String(serverPort());
  const base = `http://127.0.0.1:${port}`;
  let proxy: DatabaseProxy;

  beforeAll(async () => {
    const target = new URL(postgres!);
    proxy = new DatabaseProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const proxyPort = await proxy.listen();
    await withClient(postgres!, (client) => client.query(`CREATE DATABASE ${database}`));
    const url = new URL(databaseUrl(postgres!, database));
    url.port = String(proxyPort);
    const server = startServerProcess(
      {
        ...process.env,
        PORT: port,
        DATA_DIR: dataDir,
        DATABASE_URL: url.toString(),
        FORGE_ROOT_TOKEN: token,
        LOG_LEVEL: 'error',
        FORGE_DB_CONNECT_TIMEOUT: '1',
        FORGE_DB_STATEMENT_TIMEOUT: '2',
      },
      children,
    );
    await server.ready;
  }, 60_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    proxy?.close();
    await withClient(postgres!, (client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  });

  const ready = () => timed(`${base}/-/readiness`);
  const projects = () => timed(`${base}/api/v4/projects`);
  const UNAVAILABLE = JSON.stringify({ message: '503 Service Unavailable' });

  /** Readiness and a burst of API calls (more than the pool holds) all answer 503 in bounded time. */
  async function expectUnavailable(limitMs: number) {
    const probe = await ready();
    expect(probe.status).toBe(503);
    expect(probe.ms).toBeLessThan(limitMs);
    const answers = await Promise.all(Array.from({ length: 14 }, projects));
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 503, text: UNAVAILABLE });
      expect(answer.ms).toBeLessThan(limitMs);
    }
  }

  async function expectRecovered() {
    await until(async () => (await ready()).status === 200, 15_000, 'readiness after the database came back');
    await until(
      async () => (await projects()).status === 200,
      15_000,
      'the API after the database came back',
    );
  }

  it('answers 503 within seconds while the database holds connections open without answering', async () => {
    expect((await ready()).status).toBe(200);
    expect((await projects()).status).toBe(200);
    proxy.blackhole();
    // Waiting for a connection (1 s) plus a statement and the client's grace (2 s + 2 s), with room.
    await expectUnavailable(8000);
    proxy.forward();
    await expectRecovered();
  }, 60_000);

  it('answers 503 at once while the database refuses connections', async () => {
    proxy.refuse();
    await expectUnavailable(4000);
    proxy.forward();
    await expectRecovered();
  }, 60_000);
});

describe('the embedded database', () => {
  it('gives up waiting for its single session after the connect and statement timeouts', async () => {
    const dataSource = await createDataSource(
      { timeouts: { connectMs: 300, statementMs: 1000 } },
      databaseModel,
    );
    try {
      // A transaction that does not end holds PGlite's only session.
      const holder = dataSource.createQueryRunner();
      await holder.startTransaction();
      const started = Date.now();
      const waited = await dataSource.query('SELECT 1').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(Date.now() - started).toBeLessThan(3000);
      expect(isDatabaseUnavailable(waited)).toBe(true);
      await holder.rollbackTransaction();
      await holder.release();
      expect(await dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await dataSource.destroy();
    }
  }, 30_000);
});
