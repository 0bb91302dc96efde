import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../helpers/database.js';
// @ts-expect-error: a script, without declarations
import * as throwaway from '../../scripts/throwaway-family.mjs';

/**
 * "A family is one folder plus one line": in a copy of the repository, the throwaway family `widgets`
 * (scripts/throwaway-family.mjs) brings a new security scheme with its credential resolver, a new
 * ability and a merge check. The copy generates, lints, type-checks, builds and serves it, and the
 * family needed only its folder, its spec file, its line in src/families.ts and the generated files.
 */

interface Script {
  WIDGET_TOKEN: string;
  WIDGET_MARK: string;
  copyRepository(): { dir: string; before: Map<string, string> };
  addWidgets(dir: string): void;
  generate(dir: string): Promise<unknown>;
  lint(dir: string): Promise<unknown>;
  build(dir: string): Promise<unknown>;
  changedFiles(dir: string, before: Map<string, string>): string[];
}
const script = throwaway as Script;

const ROOT_TOKEN = 'glpat-throwaway-root-0001';

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/** The copy's built server on a fresh database (a copy of the template, or its own PGlite). */
async function startServer(dir: string, dataDir: string): Promise<{ api: string; child: ChildProcess }> {
  let databaseUrl = '';
  if (process.env.FORGE_TEST_DATABASE_URL) {
    const database = await openTestDatabase();
    databaseUrl = String((database.dataSource.options as { url: string }).url);
    await database.close();
  }
  const port = await freePort();
  const child = spawn('node', ['dist/src/main.js'], {
    cwd: dir,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      FORGE_ROOT_TOKEN: ROOT_TOKEN,
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('forge-api listening')) resolve();
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`the server ended (${code}): ${output}`)));
  });
  return { api: `http://127.0.0.1:${port}/api/v4`, child };
}

describe('a throwaway family', () => {
  let dir: string;
  let dataDir: string;
  let before: Map<string, string>;
  let server: { api: string; child: ChildProcess } | undefined;

  const call = async (method: string, route: string, headers: Record<string, string>, json?: unknown) => {
    const res = await fetch(`${server!.api}${route}`, {
      method,
      headers: { ...headers, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
  };
  const asRoot = (method: string, route: string, json?: unknown) =>
    call(method, route, { 'PRIVATE-TOKEN': ROOT_TOKEN }, json);

  beforeAll(async () => {
    ({ dir, before } = script.copyRepository());
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-throwaway-data-'));
    script.addWidgets(dir);
    await script.generate(dir);
    // The lint (tsc the longest) runs beside the build and the server's start.
    const linted = script.lint(dir);
    linted.catch(() => undefined);
    await script.build(dir);
    server = await startServer(dir, dataDir);
    await linted;
  }, 240_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      const ended = new Promise((resolve) => server!.child.once('exit', resolve));
      server.child.kill('SIGTERM');
      await ended;
    }
    for (const made of [dir, dataDir]) if (made) fs.rmSync(made, { recursive: true, force: true });
  });

  it('answers its operation with its own credential, and 401 without it or with a user’s', async () => {
    const checks = [{ name: 'widget_check', precedence: 65 }];
    const withToken = await call('GET', '/widget_service/checks', { 'Widget-Token': script.WIDGET_TOKEN });
    expect(withToken.status, withToken.text).toBe(200);
    expect(withToken.body).toEqual(checks);
    expect((await call('GET', '/widget_service/checks', {})).status).toBe(401);
    expect((await call('GET', '/widget_service/checks', { 'Widget-Token': 'other' })).status).toBe(401);
    expect((await asRoot('GET', '/widget_service/checks')).status).toBe(401);

    const project = await asRoot('POST', '/projects', { name: 'widgets', initialize_with_readme: true });
    expect(project.status, project.text).toBe(201);
    const listed = await asRoot('GET', `/projects/${project.body!.id as number}/widget_checks`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body).toEqual(checks);
  });

  it('holds a merge back while its merge check fails', async () => {
    const created = await asRoot('POST', '/projects', { name: 'merging', initialize_with_readme: true });
    const { id, default_branch: main } = created.body as { id: number; default_branch: string };
    const commit = await asRoot('POST', `/projects/${id}/repository/commits`, {
      branch: 'feature',
      start_branch: main,
      commit_message: 'A widget',
      actions: [{ action: 'create', file_path: 'widget.txt', content: 'widget\n' }],
    });
    expect(commit.status, commit.text).toBe(201);
    const mr = await asRoot('POST', `/projects/${id}/merge_requests`, {
      source_branch: 'feature',
      target_branch: main,
      title: `${script.WIDGET_MARK} Add a widget`,
    });
    expect(mr.status, mr.text).toBe(201);
    const route = `/projects/${id}/merge_requests/${mr.body!.iid as number}`;
    const refused = await asRoot('PUT', `${route}/merge`);
    expect(refused.status, refused.text).toBe(405);
    expect((await asRoot('PUT', route, { title: 'Add a widget' })).status).toBe(200);
    const merged = await asRoot('PUT', `${route}/merge`);
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body).toMatchObject({ state: 'merged' });
  });

  it('needed only its folder, its spec file, its line in families.ts and the generated files', () => {
    const changed = script.changedFiles(dir, before);
    process.stdout.write(`throwaway family widgets changed:\n  ${changed.join('\n  ')}\n`);
    expect(changed).toEqual([
      'README.md',
      'generated/openapi.d.ts',
      'generated/openapi.json',
      'generated/operation-subjects.d.ts',
      'openapi/openapi.yaml',
      'openapi/widgets.yaml',
      'src/families.ts',
      'src/widgets/abilities.ts',
      'src/widgets/manifest.ts',
      'src/widgets/widgets.handlers.ts',
      'src/widgets/widgets.service.ts',
    ]);
    const diff = fs.readFileSync(path.join(dir, 'src/families.ts'), 'utf8').split('\n').length;
    const original = fs.readFileSync(new URL('../../src/families.ts', import.meta.url), 'utf8');
    // The import and the list entry: two lines.
    expect(diff - original.split('\n').length).toBe(2);
  });
});
