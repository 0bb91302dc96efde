import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend, type Backend } from '../../src/core/contract.js';
import { FALSE_WORDS, TRUE_WORDS } from '../../src/core/params.js';
import { API_PREFIX } from '../../scripts/mock-spec.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';

/**
 * `make mock` must serve the contract: each answer of the Prism mock has the status we asked for, validates
 * against the operation's schema in generated/openapi.json, and Prism reports no violation of its own. The
 * mock is started as a user starts it, `make mock` on a `MOCK_PORT` of the test's own, and is used once it
 * prints its URL.
 *
 * Prism ignores the path of the server URL, so `make mock` serves a copy of the spec whose paths carry
 * `/api/v4` (scripts/mock-spec.ts), and GitLab clients work against it unchanged: that copy also takes
 * every boolean spelling the server takes, and its lists announce no next page, so "all pages" ends.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = { 'PRIVATE-TOKEN': 'glpat-mock-token' };

interface Case {
  name: string;
  operationId: string;
  method: string;
  path: string;
  status: number;
  headers?: Record<string, string>;
  json?: unknown;
}

const cases: Case[] = [
  { name: 'lists projects', operationId: 'listProjects', method: 'GET', path: '/projects', status: 200 },
  {
    name: 'lists projects with query parameters',
    operationId: 'listProjects',
    method: 'GET',
    path: '/projects?visibility=public&order_by=id&sort=asc&per_page=5',
    status: 200,
    headers: TOKEN,
  },
  {
    name: 'gets a project by id',
    operationId: 'getProject',
    method: 'GET',
    path: '/projects/42',
    status: 200,
  },
  {
    name: 'gets a project by URL-encoded path',
    operationId: 'getProject',
    method: 'GET',
    path: '/projects/platform%2Fapi',
    status: 200,
    headers: TOKEN,
  },
  {
    name: 'creates a project from a JSON body',
    operationId: 'createProject',
    method: 'POST',
    path: '/projects',
    status: 201,
    headers: TOKEN,
    json: { name: 'My Project', visibility: 'private', initialize_with_readme: true },
  },
  {
    name: 'answers the declared 404 of getProject',
    operationId: 'getProject',
    method: 'GET',
    path: '/projects/999',
    status: 404,
    headers: { ...TOKEN, Prefer: 'code=404' },
  },
];

let prism: ChildProcess | undefined;
let base = '';
let mockUrl = '';
let output = '';
let backend: Backend;
let mockSpecFile = '';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once `make mock` prints `line`; rejects if it exits first or says nothing within `timeoutMs`. */
function waitForLine(line: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "${line}" within ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const check = () => {
      if (!output.split('\n').includes(line)) return;
      clearTimeout(timer);
      resolve();
    };
    prism!.stdout!.on('data', check);
    prism!.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`make mock exited with ${code}:\n${output}`));
    });
  });
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  mockUrl = `${base}${API_PREFIX}`;
  mockSpecFile = path.join(root, '.forge-test', `mock-openapi-${process.pid}.json`);
  // Its own process group (make, the shell, Prism), stopped together; -o: never reinstall from a test.
  prism = spawn(
    'make',
    ['-s', '-o', 'node_modules/.installed', 'mock', `MOCK_PORT=${port}`, `MOCK_SPEC=${mockSpecFile}`],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  prism.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  prism.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  [backend] = await Promise.all([
    createBackend(),
    // Prism parses the whole bundled spec before it answers; on a loaded machine that takes a while.
    waitForLine(`mock: ${mockUrl}`, 60_000),
  ]);
}, 90_000);

afterAll(async () => {
  if (mockSpecFile) fs.rmSync(mockSpecFile, { force: true });
  if (!prism || prism.exitCode !== null) return;
  const exited = new Promise((resolve) => prism!.once('exit', resolve));
  process.kill(-prism.pid!, 'SIGTERM');
  await Promise.race([exited, sleep(3_000)]);
  if (prism.exitCode === null) process.kill(-prism.pid!, 'SIGKILL');
});

describe('Prism mock of generated/openapi.json', () => {
  it('make mock listens on MOCK_PORT and prints its URL once Prism listens', async () => {
    const lines = output.split('\n');
    const listening = lines.findIndex((line) => line.includes(`Prism is listening on ${base}`));
    expect(listening, output).toBeGreaterThanOrEqual(0);
    expect(lines.indexOf(`mock: ${mockUrl}`)).toBeGreaterThan(listening);
    expect((await fetch(`${mockUrl}/projects`)).status).toBe(200);
  });

  it('serves under /api/v4, so a GitLab client works against it', async () => {
    const api = new Gitlab({ host: base, token: 'glpat-mock-token' });
    const projects = await api.Projects.all({ maxPages: 1 });
    expect(projects.length).toBeGreaterThan(0);
    expect(projects[0]).toHaveProperty('path_with_namespace');
    expect((await fetch(`${base}/projects`)).status).toBe(404);
  });

  it('lets @gitbeaker/rest read every page of projects, branches, tags and a tree', async () => {
    const api = new Gitlab({ host: base, token: 'glpat-mock-token' });
    const projects = await api.Projects.all({ showExpanded: true });
    expect(projects.data.map((p) => p.path_with_namespace)).toEqual(['platform/api']);
    expect(projects.paginationInfo).toMatchObject({ total: 1, current: 1, next: null, totalPages: 1 });
    expect((await api.Branches.all(42)).map((b) => b.name)).toEqual(['feature/login', 'main']);
    expect((await api.Tags.all(42)).map((t) => t.name)).toEqual(['v1.0.0', 'v0.9.0']);
    const tree = await api.Repositories.allRepositoryTrees(42, { recursive: false });
    expect(tree.map((entry) => entry.path)).toEqual(['lib/parsers', 'README.md', 'vendor-lib']);
  });

  it.skipIf(!pythonGitlab)(
    'lets python-gitlab read every page, with get_all and with iterator (needs Debian python3-gitlab)',
    async () => {
      const found = JSON.parse(await runPythonClient('python_gitlab_mock.py', [base, 'glpat-mock-token']));
      expect(found).toEqual({
        projects: ['platform/api'],
        iterated: ['platform/api'],
        iterator_pages: [1, 1, null, 1],
        branches: ['feature/login', 'main'],
        tags: ['v1.0.0', 'v0.9.0'],
        tree: ['lib/parsers', 'README.md', 'vendor-lib'],
        tree_iterated: ['lib/parsers', 'README.md', 'vendor-lib'],
      });
    },
  );

  it('describes the only page of every list, linking to the list itself', async () => {
    const spec = JSON.parse(fs.readFileSync(mockSpecFile, 'utf8')) as {
      paths: Record<string, { get?: { responses: Record<string, { headers?: Record<string, unknown> }> } }>;
    };
    const lists = Object.entries(spec.paths).filter(([, item]) => item.get?.responses['200']?.headers?.Link);
    expect(lists.length).toBeGreaterThanOrEqual(16);
    for (const [route, item] of lists) {
      const link = (item.get!.responses['200']!.headers!.Link as { example: string }).example;
      expect(link, route).not.toContain('rel="next"');
      const urls = [...link.matchAll(/<([^>]+)>; rel="(first|last)"/g)].map((m) => m[1]!);
      expect(urls, route).toHaveLength(2);
      const template = new RegExp(`^${route.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      const first = new URL(urls[0]!);
      expect(first.origin, route).toBe(base);
      expect(first.pathname, route).toMatch(template);

      const response = await fetch(urls[0]!, { headers: TOKEN });
      expect(response.status, `${route}: ${response.headers.get('sl-violations')}`).toBe(200);
      expect(response.headers.get('x-next-page'), route).toBe('');
      expect(response.headers.get('link'), route).toBe(link);
      const total = response.headers.get('x-total');
      if (total !== null) expect(Number(total), route).toBe(((await response.json()) as unknown[]).length);
    }
  });

  const spellings = [...TRUE_WORDS, ...FALSE_WORDS].flatMap((word) => [word, word.toUpperCase()]);
  spellings.push('False', 'True', ' yes ');
  it.each(spellings)('takes recursive=%j as the server does', async (word) => {
    const response = await fetch(
      `${base}${API_PREFIX}/projects/42/repository/tree?recursive=${encodeURIComponent(word)}`,
      { headers: TOKEN },
    );
    expect(response.headers.get('sl-violations')).toBeNull();
    expect(response.status).toBe(200);
  });

  it('refuses a boolean the server refuses', async () => {
    const response = await fetch(`${base}${API_PREFIX}/projects/42/repository/tree?recursive=maybe`, {
      headers: TOKEN,
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('sl-violations')).toContain('recursive');
  });

  it.each(cases)('$name: $method $path → $status', async (c) => {
    const headers: Record<string, string> = { ...c.headers };
    if (c.json !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(`${base}${API_PREFIX}${c.path}`, {
      method: c.method,
      headers,
      body: c.json === undefined ? undefined : JSON.stringify(c.json),
    });
    const text = await response.text();
    expect(response.headers.get('sl-violations'), 'violations Prism reports').toBeNull();
    expect(response.status, text).toBe(c.status);
    expect(response.headers.get('content-type')).toBe('application/json');

    const operation = backend.router.getOperation(c.operationId);
    expect(operation, `operation ${c.operationId} in generated/openapi.json`).toBeDefined();
    expect(operation!.method.toUpperCase()).toBe(c.method);
    const body = backend.validator.validateResponse(JSON.parse(text), operation!, c.status);
    expect(body.errors ?? [], 'response body against the operation schema').toEqual([]);
    const headerResult = backend.validator.validateResponseHeaders(
      Object.fromEntries(response.headers),
      operation!,
      { statusCode: c.status },
    );
    expect(headerResult.errors ?? [], 'response headers against the operation').toEqual([]);
  });
});
