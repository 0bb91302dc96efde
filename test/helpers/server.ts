import 'reflect-metadata';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import type { Server } from 'node:http';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { DataSource } from 'typeorm';
import { createApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createBackend, type Backend } from '../../src/core/contract.js';
import { createHttpServer } from '../../src/core/http.js';
import type { ResponseCheck } from '../../src/core/response-validation.js';
import { createLogger } from '../../src/logger.js';
import type { Services } from '../../src/families.js';
import { openTestDatabase } from './database.js';
import { Factories } from './factories.js';

export interface TestServer {
  /** The server's root, e.g. http://127.0.0.1:40123 */
  url: string;
  /** `${url}/api/v4` */
  api: string;
  config: Config;
  dataSource: DataSource;
  services: Services;
  factories: Factories;
  /** Every response the server checked against the contract since the test began. */
  checks: ResponseCheck[];
  /** fetch against the API: `request('GET', '/projects', { token })`. */
  request: (method: string, path: string, options?: RequestOptions) => Promise<TestResponse>;
}

export interface RequestOptions {
  token?: string;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

/**
 * The contract, parsed once per worker process: the test files a worker runs share it, and with it the
 * validators it compiles on first use of each operation. It only reads, so sharing is safe.
 */
let sharedBackend: Promise<Backend> | undefined;

/**
 * Starts the real server on a random port with its own database for this test file. Every API
 * response is checked against the contract; a test whose responses do not match fails.
 */
export function useTestServer(options: { env?: Record<string, string> } = {}): TestServer {
  const server = {} as TestServer;
  let http: Server;
  let close: () => Promise<void>;
  let stopApp: (() => Promise<void>) | undefined;
  let dataDir: string | undefined;
  const checks: ResponseCheck[] = [];
  const opsLog = process.env.FORGE_OPS_LOG;

  beforeAll(async () => {
    const database = await openTestDatabase({ withQueues: true });
    close = database.close;
    // Repositories of this file's projects live in a directory of their own.
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-test-'));
    const config = loadConfig({
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      ...options.env,
    });
    const logger = createLogger(process.env.FORGE_TEST_LOG_LEVEL ?? 'silent');
    const { koa, services, stop } = await createApp({
      config,
      dataSource: database.dataSource,
      logger,
      backend: await (sharedBackend ??= createBackend()),
      onResponseCheck: (check) => {
        checks.push(check);
        if (opsLog) fs.appendFileSync(opsLog, `${JSON.stringify(check)}\n`);
      },
    });
    stopApp = stop;
    http = createHttpServer(koa.callback(), config.bodyTimeoutSeconds).listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => http.once('listening', resolve));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    // Links and web URLs must point at this server, so the external URL is its own address.
    config.externalUrl = url;
    Object.assign(server, {
      url,
      api: `${url}/api/v4`,
      config,
      dataSource: database.dataSource,
      services,
      checks,
      factories: new Factories(database.dataSource, services),
      request: (method: string, path: string, options: RequestOptions = {}) =>
        send(`${url}/api/v4${path}`, method, options),
    });
  });

  afterEach(() => {
    const invalid = checks.filter((check) => !check.valid);
    checks.length = 0;
    expect(invalid, 'responses that do not match the contract').toEqual([]);
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
    await stopApp?.();
    await close?.();
    if (dataDir) removeInBackground(dataDir);
  });

  return server;
}

/** What fetch sends unless told otherwise: `send` sends the same, so a server sees the same request. */
const FETCH_DEFAULT_HEADERS: Record<string, string> = {
  accept: '*/*',
  'accept-language': '*',
  'sec-fetch-mode': 'cors',
  'user-agent': 'node',
  'accept-encoding': 'gzip, deflate',
};
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Keep-alive, as fetch's; it honours the server's `Keep-Alive: timeout` hint, so it never reuses a socket the server is closing. */
const keepAlive = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/**
 * A request as fetch sends it (its default headers, a text/plain type for a bare string body, redirects
 * followed, gzip and deflate answers decoded, a UTF-8 BOM dropped from the text), on node:http: a
 * request costs the test process about half the CPU fetch's streams do, and test files send thousands.
 */
/**
 * Removes a file's directory (its repositories) in a process of its own: the next file starts meanwhile
 * instead of waiting for thousands of unlinks (6 s after the permission matrix), and `rm` makes fewer
 * system calls for them than fs.rmSync's rimraf. Where `rm` cannot start, fs.rm does it.
 */
function removeInBackground(dir: string): void {
  const rm = spawn('rm', ['-rf', '--', dir], { detached: true, stdio: 'ignore' });
  rm.on('error', () => void fs.promises.rm(dir, { recursive: true, force: true }).catch(() => undefined));
  rm.unref();
}

export async function send(url: string, method: string, options: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers['PRIVATE-TOKEN'] = options.token;
  let body: string | undefined = options.body;
  if (options.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  for (let redirects = 0; ; redirects++) {
    const response = await request(url, method, headers, body);
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null || redirects >= 20) return response;
    url = new URL(location, url).toString();
    // As fetch: a 303, or a 301/302 answering a POST, is followed with a GET without the body.
    if (
      response.status === 303 ||
      ((response.status === 301 || response.status === 302) && method === 'POST')
    ) {
      if (method !== 'HEAD') method = 'GET';
      body = undefined;
      for (const name of Object.keys(headers))
        if (/^content-(type|encoding|language|location)$/i.test(name)) delete headers[name];
    }
  }
}

function request(
  url: string,
  method: string,
  given: Record<string, string>,
  body: string | undefined,
): Promise<TestResponse> {
  const headers: Record<string, string> = {};
  const names = new Set(Object.keys(given).map((name) => name.toLowerCase()));
  for (const [name, value] of Object.entries(FETCH_DEFAULT_HEADERS))
    if (!names.has(name)) headers[name] = value;
  Object.assign(headers, given);
  if (body !== undefined) {
    if (!names.has('content-type')) headers['content-type'] = 'text/plain;charset=UTF-8';
    headers['content-length'] = String(Buffer.byteLength(body));
  } else if (['POST', 'PUT', 'PATCH'].includes(method.toUpperCase())) headers['content-length'] = '0';
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      { method, headers, agent: target.protocol === 'https:' ? keepAlive.https : keepAlive.http },
      (res) => {
        const chunks: Buffer[] = [];
        const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
        const decoder =
          method === 'HEAD' || res.statusCode === 204 || res.statusCode === 304
            ? undefined
            : encoding === 'gzip' || encoding === 'x-gzip'
              ? zlib.createGunzip()
              : encoding === 'deflate'
                ? zlib.createInflate()
                : undefined;
        const stream = decoder ? res.pipe(decoder) : res;
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', reject);
        res.on('error', reject);
        stream.on('end', () => {
          const responseHeaders = new Headers();
          for (let i = 0; i < res.rawHeaders.length; i += 2)
            responseHeaders.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
          const text = new TextDecoder().decode(Buffer.concat(chunks));
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body: parsed, text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** node:http, for what fetch refuses to send (a body on GET, bytes as they are). */
export function sendRaw(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
