/**
 * Snippet repository storage moves, end to end on two real storages: a bulk move of every snippet
 * (project and personal) on the first, a push and a file update refused while a snippet moves (reads
 * keep working), every snippet cloned with identical refs from the second storage afterwards, raw files
 * read from there; GitLab's errors and administrators only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SnippetRepositories } from '../../src/snippets/snippet-repositories.js';
import { READ_ONLY_MESSAGE } from '../../src/repository_storage_moves/write-gate.js';
import { useGitWorkDir } from '../helpers/git-cli.js';
import { useTestServer } from '../helpers/server.js';
import type { TestUser } from '../helpers/factories.js';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-snippet-moves-'));
const second = path.join(scratch, 'second');
fs.mkdirSync(second);
const pauseFile = path.join(scratch, 'pause');

const server = useTestServer({ env: { FORGE_STORAGES: `second=${second}`, FORGE_JOB_POLL: '0.5' } });
const { work, gitCli } = useGitWorkDir('forge-snippet-moves-git-');

afterAll(() => {
  delete process.env.FORGE_FAULT_PAUSE;
  delete process.env.FORGE_FAULT_PAUSE_FILE;
  fs.rmSync(scratch, { recursive: true, force: true });
});

type Json = Record<string, unknown>;
let admin: TestUser;

beforeAll(async () => {
  admin = (await server.factories.caller('admin'))!;
});

const api = (method: string, route: string, json?: unknown, token = admin.token) =>
  server.request(method, route, { token, json });

async function until<T>(probe: () => Promise<T | undefined | false>, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const movesOf = async (snippetId: number) =>
  (await api('GET', `/snippets/${snippetId}/repository_storage_moves`)).body as Json[];

async function settled(snippetId: number, moveId: number): Promise<Json> {
  return until(async () => {
    const move = (await api('GET', `/snippets/${snippetId}/repository_storage_moves/${moveId}`)).body as Json;
    return ['finished', 'failed', 'cleanup_failed'].includes(move.state as string) && move;
  }, `move ${moveId} settles`);
}

const withToken = (httpUrl: string) => {
  const url = new URL(httpUrl);
  url.username = 'anyone';
  url.password = admin.token;
  return url.toString();
};

async function lsRemote(url: string): Promise<string> {
  const result = await gitCli(['ls-remote', url]);
  expect(result.ok, result.stderr).toBe(true);
  return result.stdout;
}

const diskPath = (storage: string, id: number) =>
  path.join(server.services.storage.roots()[storage], SnippetRepositories.relativePath(id));

/** A snippet (a project's, or personal) with one more commit pushed with git; its clone and refs. */
async function pushedSnippet(kind: 'project' | 'personal', name: string) {
  const route =
    kind === 'project'
      ? `/projects/${(await server.factories.projectWithReadme({ owner: admin })).id}/snippets`
      : '/snippets';
  const created = await api('POST', route, {
    title: `moving ${name}`,
    visibility: 'private',
    files: [{ file_path: 'first.txt', content: `first of ${name}` }],
  });
  expect(created.status).toBe(201);
  const snippet = created.body as Json;
  const url = withToken(snippet.http_url_to_repo as string);
  const dir = path.join(work, name);
  expect((await gitCli(['clone', '--quiet', url, dir])).ok).toBe(true);
  fs.writeFileSync(path.join(dir, 'pushed.txt'), name);
  await gitCli(['add', '.'], dir);
  await gitCli(['commit', '-q', '-m', `push to ${name}`], dir);
  const push = await gitCli(['push', '--quiet', 'origin', 'main'], dir);
  expect(push.ok, push.stderr).toBe(true);
  return { id: snippet.id as number, kind, route, url, dir, refs: await lsRemote(url) };
}

/** The route of one snippet: a project snippet's under its project. */
const snippetRoute = (s: { id: number; route: string }) => `${s.route}/${s.id}`;

describe('moving every snippet of a storage', () => {
  it(
    'refuses writes while a snippet moves, then serves every snippet from the destination',
    { timeout: 120_000 },
    async () => {
      const snippets = [];
      for (const [kind, name] of [
        ['project', 'one'],
        ['personal', 'two'],
        ['project', 'three'],
      ] as const)
        snippets.push(await pushedSnippet(kind, name));
      for (const { id } of snippets) expect(fs.existsSync(diskPath('default', id))).toBe(true);

      // Hold each move after its copy, before the switch: the repository is read-only there.
      fs.writeFileSync(pauseFile, '');
      process.env.FORGE_FAULT_PAUSE_FILE = pauseFile;
      process.env.FORGE_FAULT_PAUSE = 'storage-move:replicated';
      const scheduled = await api('POST', '/snippet_repository_storage_moves', {
        source_storage_name: 'default',
        destination_storage_name: 'second',
      });
      expect(scheduled.status).toBe(202);
      expect(scheduled.body).toEqual({ message: '202 Accepted' });

      const [first] = snippets;
      const moving = await until(async () => {
        const [move] = await movesOf(first.id);
        return move && ['scheduled', 'started'].includes(move.state as string) && move;
      }, 'the first snippet has a move in progress');
      expect(moving).toMatchObject({
        source_storage_name: 'default',
        destination_storage_name: 'second',
        snippet: {
          id: first.id,
          title: 'moving one',
          visibility: 'private',
          http_url_to_repo: expect.stringMatching(new RegExp(`/snippets/${first.id}\\.git$`)),
        },
      });
      expect((moving.snippet as Json).project_id).toEqual(expect.any(Number));

      // git push: refused, with GitLab's message as a remote line.
      fs.writeFileSync(path.join(first.dir, 'late.txt'), 'late');
      await gitCli(['add', '.'], first.dir);
      await gitCli(['commit', '-q', '-m', 'late'], first.dir);
      const push = await gitCli(['push', 'origin', 'main'], first.dir);
      expect(push.ok).toBe(false);
      expect(push.stderr).toContain(`remote: ${READ_ONLY_MESSAGE}`);
      // API writes of its files: refused with the project form's status and message.
      const update = await api('PUT', snippetRoute(first), {
        files: [{ action: 'create', file_path: 'new.txt', content: 'x' }],
      });
      expect(update.status).toBe(400);
      expect(update.body).toEqual({ message: READ_ONLY_MESSAGE });
      // Reads keep working; so does a change of the title alone, which does not touch the repository.
      const raw = await server.request('GET', `${snippetRoute(first)}/files/main/first.txt/raw`, {
        token: admin.token,
      });
      expect(raw.status).toBe(200);
      expect(raw.text).toBe('first of one');
      expect(await lsRemote(first.url)).toBe(first.refs);
      expect((await api('PUT', snippetRoute(first), { title: 'renamed' })).status).toBe(200);
      // A second move of a snippet being moved: GitLab's validation error.
      const again = await api('POST', `/snippets/${first.id}/repository_storage_moves`, {
        destination_storage_name: 'second',
      });
      expect(again.status).toBe(400);
      expect(again.body).toEqual({ message: { snippet: ['is read-only'] } });

      fs.rmSync(pauseFile);
      for (const { id } of snippets) {
        const [move] = await until(async () => {
          const moves = await movesOf(id);
          return moves.length > 0 && moves;
        }, 'a move is listed');
        expect(await settled(id, move.id as number)).toMatchObject({ state: 'finished' });
      }

      for (const snippet of snippets) {
        const { id, url, refs } = snippet;
        expect(fs.existsSync(diskPath('second', id))).toBe(true);
        expect(fs.existsSync(diskPath('default', id))).toBe(false);
        // Cloned from the second storage, with exactly the refs it had.
        expect(await lsRemote(url)).toBe(refs);
        const clone = path.join(work, `clone-${id}`);
        expect((await gitCli(['clone', '--quiet', '--mirror', url, clone])).ok).toBe(true);
        expect((await gitCli(['fsck', '--no-progress'], clone)).ok).toBe(true);
        const files = ((await api('GET', snippetRoute(snippet))).body as Json).files as Json[];
        expect(files.map((f) => f.path).sort()).toEqual(['first.txt', 'pushed.txt']);
        const raw = await server.request('GET', `${snippetRoute(snippet)}/files/main/pushed.txt/raw`, {
          token: admin.token,
        });
        expect(raw.text).toBe(path.basename(snippet.dir));
      }
      // Writable again, on the new storage: by git and through the API.
      const retry = await gitCli(['push', '--quiet', 'origin', 'main'], first.dir);
      expect(retry.ok, retry.stderr).toBe(true);
      const updated = await api('PUT', snippetRoute(first), {
        files: [{ action: 'create', file_path: 'after.txt', content: 'after' }],
      });
      expect(updated.status).toBe(200);
      expect(((updated.body as Json).files as Json[]).map((f) => f.path)).toContain('after.txt');
      expect(fs.existsSync(diskPath('default', first.id))).toBe(false);

      const all = (await api('GET', '/snippet_repository_storage_moves?per_page=2')).body as Json[];
      expect(all).toHaveLength(2);
      const one = await api('GET', `/snippet_repository_storage_moves/${all[0].id as number}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(all[0]);
    },
  );
});

describe('scheduling errors', () => {
  it.each([
    [
      'an unknown destination',
      (id: number) => [`/snippets/${id}/repository_storage_moves`, { destination_storage_name: 'nowhere' }],
      { message: { destination_storage_name: ['is not included in the list'] } },
    ],
    [
      'an unknown bulk source',
      () => ['/snippet_repository_storage_moves', { source_storage_name: 'nowhere' }],
      { error: 'source_storage_name does not have a valid value' },
    ],
    [
      'an unknown bulk destination',
      () => [
        '/snippet_repository_storage_moves',
        { source_storage_name: 'second', destination_storage_name: 'nowhere' },
      ],
      { error: 'destination_storage_name does not have a valid value' },
    ],
    [
      'a bulk move without a source',
      () => ['/snippet_repository_storage_moves', {}],
      { error: 'source_storage_name is missing' },
    ],
  ] as const)('refuses %s with 400', async (_, call, expected) => {
    const snippet = await pushedSnippet('personal', `error-${Math.random().toString(36).slice(2)}`);
    const [route, body] = call(snippet.id);
    const response = await api('POST', route as string, body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual(expected);
  });

  it('a move to the storage the snippet is on copies nothing and finishes', async () => {
    const { id, url, refs } = await pushedSnippet('personal', 'same');
    const move = await api('POST', `/snippets/${id}/repository_storage_moves`, {});
    expect(move.status).toBe(201);
    expect(move.body).toMatchObject({ state: 'scheduled', destination_storage_name: 'default' });
    expect(await settled(id, (move.body as Json).id as number)).toMatchObject({ state: 'finished' });
    expect(await lsRemote(url)).toBe(refs);
    expect(fs.existsSync(diskPath('default', id))).toBe(true);
  });

  it.each([
    ['a missing snippet', () => '/snippets/2147483647/repository_storage_moves', '404 Snippet Not Found'],
    ['a missing move', () => '/snippet_repository_storage_moves/2147483647', '404 Not found'],
  ])('answers 404 for %s', async (_, route, message) => {
    const response = await api('GET', route());
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message });
  });

  it("answers 404 for another snippet's move, and a project move is no snippet move", async () => {
    const a = await pushedSnippet('personal', 'a');
    const b = await pushedSnippet('personal', 'b');
    const move = (await api('POST', `/snippets/${a.id}/repository_storage_moves`, {})).body as Json;
    const elsewhere = await api('GET', `/snippets/${b.id}/repository_storage_moves/${move.id as number}`);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ message: '404 Not found' });
    expect((await api('GET', `/project_repository_storage_moves/${move.id as number}`)).status).toBe(404);
    await settled(a.id, move.id as number);
  });

  it('is for administrators only', async () => {
    const owner = (await server.factories.caller('outsider'))!;
    const created = await api(
      'POST',
      '/snippets',
      { title: 'own', files: [{ file_path: 'a.txt', content: 'a' }] },
      owner.token,
    );
    const id = (created.body as Json).id as number;
    for (const [method, route] of [
      ['GET', '/snippet_repository_storage_moves'],
      ['GET', `/snippets/${id}/repository_storage_moves`],
      ['POST', `/snippets/${id}/repository_storage_moves`],
    ]) {
      expect((await api(method, route, method === 'POST' ? {} : undefined, owner.token)).status).toBe(403);
      expect((await server.request(method, route)).status).toBe(401);
    }
  });
});
