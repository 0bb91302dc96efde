/**
 * Clients generated from the contract send the token once, in a header. A generator sends a token for
 * every security alternative an operation declares, so the contract declares one user-token scheme; the
 * server still accepts `Authorization: Bearer` and `?private_token=`, as GitLab does, without offering
 * them to generators. Both clients are generated from generated/openapi.json into a temporary directory
 * and used against the test server; a recording `fetch` sees each request as the client sends it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient as generateHeyApiClient } from '@hey-api/openapi-ts';
import createFetchClient, { type Middleware } from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { paths } from '../../generated/openapi.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const SPEC_FILE = fileURLToPath(new URL('../../generated/openapi.json', import.meta.url));

type Json = Record<string, unknown>;
type Requirement = Record<string, string[]>;
interface Scheme {
  type: string;
  in?: string;
  name?: string;
  scheme?: string;
}
interface Spec {
  security: Requirement[];
  paths: Record<string, Record<string, { operationId?: string; security?: Requirement[] }>>;
  components: { securitySchemes: Record<string, Scheme> };
}

const spec = JSON.parse(fs.readFileSync(SPEC_FILE, 'utf8')) as Spec;
let outDir: string;

beforeAll(() => {
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-generated-clients-'));
});
afterAll(() => fs.rmSync(outDir, { recursive: true, force: true }));

/** A `fetch` that keeps each request as the client built it, then sends it. */
function recordingFetch(sent: Request[]) {
  return (request: Request) => {
    sent.push(request.clone());
    return fetch(request);
  };
}

/** Where a request carries the token: `header <name>` for each header, `url` for the URL. */
function tokenPlaces(request: Request, token: string): string[] {
  const places = [...request.headers]
    .filter(([, value]) => value.includes(token))
    .map(([name]) => `header ${name}`);
  if (request.url.includes(token)) places.push('url');
  return places;
}

function expectTokenOnceInAHeader(sent: Request[], token: string) {
  expect(sent.length).toBeGreaterThan(0);
  for (const request of sent) {
    expect(tokenPlaces(request, token), `${request.method} ${request.url}`).toEqual([
      expect.stringMatching(/^header (private-token|authorization)$/),
    ]);
    expect(new URL(request.url).searchParams.has('private_token')).toBe(false);
  }
}

/** A private project of a new user, who holds an `api` token: reads and writes need the token. */
async function privateProjectOfANewUser() {
  const owner = await server.factories.user();
  const project = await server.factories.project({ owner, visibility: 'private' });
  return { owner, project };
}

describe('@hey-api/openapi-ts', () => {
  type HeyApiResult = { data?: unknown; response?: Response };
  type SdkFunction = (options: Json) => Promise<HeyApiResult>;
  let sdk: Record<string, SdkFunction>;
  let createClient: (config: Json) => unknown;
  let sdkSource: string;

  beforeAll(async () => {
    const output = path.join(outDir, 'hey-api');
    await generateHeyApiClient({
      input: SPEC_FILE,
      output: { path: output },
      plugins: ['@hey-api/client-fetch', '@hey-api/sdk'],
      logs: { level: 'silent', file: false },
    });
    sdkSource = fs.readFileSync(path.join(output, 'sdk.gen.ts'), 'utf8');
    sdk = (await import(path.join(output, 'sdk.gen.ts'))) as Record<string, SdkFunction>;
    ({ createClient } = (await import(path.join(output, 'client/index.ts'))) as {
      createClient: (config: Json) => unknown;
    });
  });

  it('offers each operation one way to send a user token, never the query string', () => {
    // Each operation's `security: [...]`, up to the `url` that follows it.
    const blocks = sdkSource.match(/security: \[[\s\S]*?\n {4}url:/g) ?? [];
    expect(blocks.length).toBeGreaterThan(100);
    const userToken = blocks.filter((block) => block.includes("'PRIVATE-TOKEN'"));
    expect(userToken.length).toBeGreaterThan(100);
    expect(blocks.filter((block) => block.includes("'private_token'"))).toEqual([]);
    expect(userToken.filter((block) => block.includes("'bearer'"))).toEqual([]);
  });

  it('sends the token once, in a header, on reads and writes that succeed', async () => {
    const { owner, project } = await privateProjectOfANewUser();
    const sent: Request[] = [];
    const client = createClient({ baseUrl: server.api, auth: owner.token, fetch: recordingFetch(sent) });

    const user = await sdk.getCurrentUser({ client });
    expect(user.response?.status).toBe(200);
    expect((user.data as Json).username).toBe(owner.user.username);

    const read = await sdk.getProject({ client, path: { id: String(project.id) } });
    expect(read.response?.status).toBe(200);
    expect((read.data as Json).id).toBe(project.id);

    const created = await sdk.createProject({ client, body: { name: `generated ${Date.now()}` } });
    expect(created.response?.status).toBe(201);
    expect((created.data as Json).namespace).toMatchObject({ path: owner.user.username });

    expect(sent.map((request) => request.method)).toEqual(['GET', 'GET', 'POST']);
    expectTokenOnceInAHeader(sent, owner.token);
  });
});

describe('openapi-typescript and openapi-fetch', () => {
  /** The requirements the contract declares for an operation: its own, or the document's. */
  const requirementsOf = (schemaPath: string, method: string) =>
    spec.paths[schemaPath]![method.toLowerCase()]!.security ?? spec.security;

  /**
   * openapi-fetch leaves authentication to middleware; this one does what generated SDKs do: for every
   * alternative the operation declares, it sends the token as that scheme says.
   */
  const declaredAuth = (token: string): Middleware => ({
    onRequest({ request, schemaPath }) {
      const url = new URL(request.url);
      for (const requirement of requirementsOf(schemaPath, request.method))
        for (const name of Object.keys(requirement)) {
          const scheme = spec.components.securitySchemes[name]!;
          if (scheme.type === 'http' && scheme.scheme === 'bearer')
            request.headers.set('Authorization', `Bearer ${token}`);
          else if (scheme.in === 'header') request.headers.set(scheme.name!, token);
          else if (scheme.in === 'query') url.searchParams.set(scheme.name!, token);
        }
      if (url.href === request.url) return request;
      return new Request(url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        duplex: 'half',
      } as RequestInit);
    },
  });

  it('generates the paths type of every operation', async () => {
    const source = astToString(await openapiTS(spec as never, { silent: true }));
    fs.writeFileSync(path.join(outDir, 'openapi.d.ts'), source);
    expect(source).toContain('export interface paths');
    const missing = Object.entries(spec.paths).flatMap(([route, item]) =>
      Object.values(item)
        .filter((operation) => operation.operationId)
        .filter(
          (operation) => !source.includes(`"${route}": {`) || !source.includes(`${operation.operationId}: {`),
        )
        .map((operation) => operation.operationId),
    );
    expect(missing).toEqual([]);
    expect(source).not.toMatch(/\bprivate_token\??:/);
  });

  it('sends the token once, in a header, on reads and writes that succeed', async () => {
    const { owner, project } = await privateProjectOfANewUser();
    const sent: Request[] = [];
    const client = createFetchClient<paths>({ baseUrl: server.api, fetch: recordingFetch(sent) });
    client.use(declaredAuth(owner.token));

    const user = await client.GET('/user');
    expect(user.response.status).toBe(200);
    expect((user.data as Json).username).toBe(owner.user.username);

    const read = await client.GET('/projects/{id}', { params: { path: { id: String(project.id) } } });
    expect(read.response.status).toBe(200);
    expect(read.data?.id).toBe(project.id);

    const created = await client.POST('/projects', { body: { name: `fetch ${Date.now()}` } });
    expect(created.response.status).toBe(201);

    expect(sent.map((request) => request.method)).toEqual(['GET', 'GET', 'POST']);
    expectTokenOnceInAHeader(sent, owner.token);
  });
});

describe('the token forms the contract does not offer generators', () => {
  it.each([
    ['Authorization: Bearer', (token: string) => ({ headers: { Authorization: `Bearer ${token}` } })],
    ['?private_token=', () => ({})],
  ])('are still accepted: %s', async (form, init) => {
    const { owner } = await privateProjectOfANewUser();
    const query = form.startsWith('?') ? `?private_token=${owner.token}` : '';
    const response = await fetch(`${server.api}/user${query}`, init(owner.token));
    expect(response.status).toBe(200);
    expect(((await response.json()) as Json).username).toBe(owner.user.username);
  });
});
