/** The repository reads: tree, blobs, archives, compare, contributors and merge base, against real git. */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VisibilityName } from '../../src/core/abilities.js';
import { gitText } from '../../src/git/git.js';
import { AccessLevel } from '../../src/core/access-level.js';
import { repositoryHandlers } from '../../src/repository/repository.handlers.js';
import type { TestUser } from '../helpers/factories.js';
import {
  setBranch,
  writeBlob,
  writeCommit,
  type CommitSpec,
  type FileSpec,
} from '../helpers/git-plumbing.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const exec = promisify(execFile);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-repository-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

type Json = Record<string, unknown>;
let counter = 0;

/** A commit built with plumbing on top of its first parent's tree (or `base`), its message as `-m` gives it. */
const makeCommit = (dir: string, spec: CommitSpec): Promise<string> =>
  writeCommit(dir, { ...spec, message: `${spec.message}\n` });

async function createProject(owner: TestUser, attrs: Json = {}) {
  const created = await server.request('POST', '/projects', {
    token: owner.token,
    json: { name: `repo-${++counter}`, initialize_with_readme: true, visibility: 'public', ...attrs },
  });
  expect(created.status).toBe(201);
  const project = created.body as Json & { id: number; path: string; path_with_namespace: string };
  return { project, dir: server.services.storage.diskPath('default', project.id) };
}

const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff, 0xfe, 0x00, 0x0a]);
const PARSER_V1 = 'def parse(text)\n  text.split\nend\n';
const PARSER_V2 = 'def parse(text)\n  return [] if text.empty?\n\n  text.split\nend\n';

/**
 * One public project shared by the read-only tests:
 *
 *   README (api) - base (alice) - feature1 (bob) - feature2 (alice)    <- feature
 *                       \                                   \
 *                        main1 (carol) --------------------- merge     <- main
 *   orphan: one unrelated commit                                        <- orphan
 */
interface Fixture {
  owner: TestUser;
  project: Json & { id: number; path: string; path_with_namespace: string };
  dir: string;
  readme: string;
  base: string;
  feature1: string;
  feature2: string;
  main1: string;
  merge: string;
  orphan: string;
  submodule: string;
}

let fx: Fixture;

beforeAll(async () => {
  const owner = await server.factories.user({ username: `owner-${crypto.randomBytes(3).toString('hex')}` });
  const { project, dir } = await createProject(owner);
  const readme = await gitText(['rev-parse', 'main'], { gitDir: dir });
  const submodule = 'a'.repeat(40);
  const alice = { name: 'Alice Arden', email: 'alice@example.com' };
  const bob = { name: 'bob', email: 'bob@example.com' };
  const carol = { name: 'Carol Carver', email: 'carol@example.com' };
  const base = await makeCommit(dir, {
    parents: [readme],
    author: alice,
    date: '2026-01-01T10:00:00Z',
    message: 'Add the parser',
    files: {
      'lib/parser.rb': PARSER_V1,
      'lib/util/helpers.rb': 'module Helpers; end\n',
      'docs/guide.md': '# Guide\n\nRead me first.\nThen read the rest.\n',
      'docs/drafts/wip.md': 'not yet\n',
      'bin/run': { mode: '100755', sha: await writeBlob(dir, '#!/bin/sh\necho run\n') },
      'image.bin': BINARY,
      'vendor-lib': { mode: '160000', sha: submodule },
    },
  });
  const feature1 = await makeCommit(dir, {
    parents: [base],
    author: bob,
    date: '2026-01-02T10:00:00Z',
    message: 'Handle empty input\n\nSigned-off-by: bob <bob@example.com>',
    files: {
      'lib/parser.rb': PARSER_V2,
      'docs/guide.md': null,
      'docs/manual.md': '# Guide\n\nRead me first.\nThen read the rest.\n',
      'bin/run': null,
    },
  });
  const feature2 = await makeCommit(dir, {
    parents: [feature1],
    author: alice,
    date: '2026-01-03T10:00:00Z',
    message: 'Add data',
    files: {
      '.gitattributes': 'data/*.csv gitlab-generated\n',
      'data/points.csv': 'x,y\n1,2\n',
      'package-lock.json': '{}\n',
      'image.bin': Buffer.concat([BINARY, Buffer.from([0x00, 0x02])]),
      'CHANGES.md': 'Everything changed\n',
    },
  });
  const main1 = await makeCommit(dir, {
    parents: [base],
    author: carol,
    date: '2026-01-04T10:00:00Z',
    message: 'Document the helpers',
    files: { 'lib/util/helpers.rb': '# Helpers for the parser\nmodule Helpers; end\n' },
  });
  // The merge of feature into main: feature's tree with main's own change.
  const merge = await makeCommit(dir, {
    parents: [main1, feature2],
    base: feature2,
    author: { name: 'Merger', email: 'merger@example.com' },
    date: '2026-01-05T10:00:00Z',
    message: "Merge branch 'feature'",
    files: { 'lib/util/helpers.rb': '# Helpers for the parser\nmodule Helpers; end\n' },
  });
  const orphan = await makeCommit(dir, {
    parents: [],
    date: '2026-01-06T10:00:00Z',
    message: 'Unrelated',
    files: { 'other.txt': 'other\n' },
  });
  await setBranch(dir, 'main', merge);
  await setBranch(dir, 'feature', feature2);
  await setBranch(dir, 'orphan', orphan);
  await setBranch(dir, 'topic/nested', feature1);
  fx = { owner, project, dir, readme, base, feature1, feature2, main1, merge, orphan, submodule };
});

const get = (apiPath: string, token?: string) => server.request('GET', apiPath, { token });
const repo = (suffix: string) => `/projects/${fx.project.id}/repository/${suffix}`;

async function getBytes(apiPath: string, token?: string) {
  const response = await fetch(`${server.api}${apiPath}`, {
    headers: token ? { 'PRIVATE-TOKEN': token } : {},
  });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

/**
 * Runs a burst of requests that must fall into one fixed rate-limit window: when the minute turns
 * meanwhile, the burst is run again (each attempt uses fresh callers).
 */
async function inOneMinute<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 0; ; tries++) {
    const started = Math.floor(Date.now() / 60_000);
    const result = await attempt();
    if (Math.floor(Date.now() / 60_000) === started || tries === 2) return result;
  }
}

/** git processes of this machine that are reading the blob `sha`. */
async function gitProcessesReading(sha: string): Promise<number> {
  const { stdout } = await exec('ps', ['-eo', 'args']);
  return stdout.split('\n').filter((line) => line.includes(`cat-file blob ${sha}`)).length;
}

const kinds = (entries: unknown) => (entries as Json[]).map((entry) => `${entry.type}:${entry.path}`);
const revParse = (spec: string) => gitText(['rev-parse', spec], { gitDir: fx.dir });

describe('tree', () => {
  it('lists the root of the default branch: directories, then files, then submodules', async () => {
    const response = await get(repo('tree'));
    expect(response.status).toBe(200);
    expect(kinds(response.body)).toEqual([
      'tree:data',
      'tree:docs',
      'tree:lib',
      'blob:.gitattributes',
      'blob:CHANGES.md',
      'blob:README.md',
      'blob:image.bin',
      'blob:package-lock.json',
      'commit:vendor-lib',
    ]);
    const body = response.body as Json[];
    expect(body[1]).toEqual({
      id: await revParse('main:docs'),
      name: 'docs',
      type: 'tree',
      path: 'docs',
      mode: '040000',
    });
    expect(body[5]).toEqual({
      id: await revParse('main:README.md'),
      name: 'README.md',
      type: 'blob',
      path: 'README.md',
      mode: '100644',
    });
    expect(body[8]).toEqual({
      id: fx.submodule,
      name: 'vendor-lib',
      type: 'commit',
      path: 'vendor-lib',
      mode: '160000',
    });
    expect(response.headers.get('x-total')).toBe('9');
    expect(response.headers.get('x-per-page')).toBe('20');
  });

  it('lists a directory at a ref, recursively, with full paths and modes', async () => {
    const nested = await get(repo(`tree?ref=${fx.base}&path=bin/`));
    expect(nested.body).toEqual([
      {
        id: await revParse(`${fx.base}:bin/run`),
        name: 'run',
        type: 'blob',
        path: 'bin/run',
        mode: '100755',
      },
    ]);
    const recursive = await get(repo('tree?ref=topic%2Fnested&path=lib&recursive=true'));
    expect(recursive.status).toBe(200);
    expect(kinds(recursive.body)).toEqual([
      'tree:lib/util',
      'blob:lib/parser.rb',
      'blob:lib/util/helpers.rb',
    ]);
    expect((recursive.body as Json[])[2]).toMatchObject({ name: 'helpers.rb', path: 'lib/util/helpers.rb' });
    const python = await get(repo('tree?path=docs&recursive=True'));
    expect(kinds(python.body)).toEqual([
      'tree:docs/drafts',
      'blob:docs/drafts/wip.md',
      'blob:docs/manual.md',
    ]);
  });

  it('paginates by offset with every header', async () => {
    const response = await get(repo('tree?recursive=true&per_page=5&page=2'));
    expect(response.status).toBe(200);
    expect(kinds(response.body)).toEqual([
      'blob:.gitattributes',
      'blob:CHANGES.md',
      'blob:README.md',
      'blob:data/points.csv',
      'blob:docs/drafts/wip.md',
    ]);
    expect(response.headers.get('x-total')).toBe('16');
    expect(response.headers.get('x-total-pages')).toBe('4');
    expect(response.headers.get('x-page')).toBe('2');
    expect(response.headers.get('x-next-page')).toBe('3');
    expect(response.headers.get('x-prev-page')).toBe('1');
    expect(response.headers.get('link')).toContain(
      `<${server.api}${repo('tree')}?recursive=true&page=3&per_page=5>; rel="next"`,
    );
  });

  it('paginates by keyset through the Link header, with GitLab tokens or object IDs', async () => {
    const all = kinds((await get(repo('tree?recursive=true&pagination=none'))).body);
    expect(all).toHaveLength(16);
    let url: string | undefined = `${server.api}${repo('tree')}?recursive=true&pagination=keyset&per_page=5`;
    const seen: string[] = [];
    let pages = 0;
    while (url) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-total')).toBeNull();
      expect(response.headers.get('x-per-page')).toBe('5');
      seen.push(...kinds(await response.json()));
      pages += 1;
      url = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
      if (url) {
        const token = new URL(url).searchParams.get('page_token')!;
        expect(JSON.parse(Buffer.from(token, 'base64').toString('utf8'))).toEqual({
          file_name: seen[seen.length - 1].split(':')[1],
        });
      }
    }
    expect(pages).toBe(4);
    expect(seen).toEqual(all);

    const byId = await get(
      repo(`tree?pagination=keyset&per_page=2&page_token=${await revParse('main:docs')}`),
    );
    expect(kinds(byId.body)).toEqual(['tree:lib', 'blob:.gitattributes']);
    const unknown = await get(repo('tree?pagination=keyset&page_token=nothing-like-this'));
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ error: 'page_token is invalid' });
  });

  it('returns everything with pagination=none, only when recursive', async () => {
    const none = await get(repo('tree?recursive=true&pagination=none&per_page=2'));
    expect((none.body as Json[]).length).toBe(16);
    expect(none.headers.get('link')).toBeNull();
    const refused = await get(repo('tree?pagination=none'));
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: 'pagination cannot be "none" unless "recursive" is true' });
    const invalid = await get(repo('tree?pagination=pages'));
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ error: 'pagination does not have a valid value' });
  });

  it.each([
    ['a path that does not exist', 'tree?path=nowhere'],
    ['a path that is a file', 'tree?path=README.md'],
    ['a ref that names no commit', 'tree?ref=no-such-branch'],
    ['an option-like ref', 'tree?ref=--all'],
  ])('answers 404 Tree Not Found for %s', async (_case, suffix) => {
    const response = await get(repo(suffix));
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: '404 Tree Not Found' });
  });

  it('answers 404 Tree Not Found for an empty repository, and 404 Project Not Found for no project', async () => {
    const { project } = await createProject(fx.owner, { initialize_with_readme: false });
    const empty = await get(`/projects/${project.id}/repository/tree`);
    expect(empty.status).toBe(404);
    expect(empty.body).toEqual({ message: '404 Tree Not Found' });
    const missing = await get('/projects/999999/repository/tree');
    expect(missing.body).toEqual({ message: '404 Project Not Found' });
  });

  it('finds the project by its URL-encoded path', async () => {
    const response = await get(
      `/projects/${encodeURIComponent(fx.project.path_with_namespace)}/repository/tree?path=lib`,
    );
    expect(kinds(response.body)).toEqual(['tree:lib/util', 'blob:lib/parser.rb']);
  });
});

describe('blobs', () => {
  it('returns a blob base64-encoded, by object ID or by revision', async () => {
    const sha = await revParse('main:lib/parser.rb');
    const response = await get(repo(`blobs/${sha}`));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      size: Buffer.byteLength(PARSER_V2),
      encoding: 'base64',
      content: Buffer.from(PARSER_V2).toString('base64'),
      sha,
    });
    const binary = await get(repo(`blobs/${await revParse(`${fx.base}:image.bin`)}`));
    expect(Buffer.from((binary.body as Json).content as string, 'base64')).toEqual(BINARY);
    const short = await get(repo(`blobs/${sha.slice(0, 10)}`));
    expect((short.body as Json).sha).toBe(sha);
    const byRevision = await get(repo(`blobs/${encodeURIComponent('main:lib/parser.rb')}`));
    expect((byRevision.body as Json).sha).toBe(sha);
  });

  it('streams the exact bytes, as text or as binary', async () => {
    const text = await getBytes(repo(`blobs/${await revParse('main:lib/parser.rb')}/raw`));
    expect(text.response.status).toBe(200);
    expect(text.response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(text.response.headers.get('content-disposition')).toBe('inline');
    expect(text.response.headers.get('cache-control')).toBe('no-cache, no-store');
    expect(text.bytes.toString('utf8')).toBe(PARSER_V2);
    const binary = await getBytes(repo(`blobs/${await revParse(`${fx.base}:image.bin`)}/raw`));
    expect(binary.response.headers.get('content-type')).toBe('application/octet-stream');
    expect(binary.response.headers.get('content-disposition')).toBe('attachment');
    expect(binary.response.headers.get('content-length')).toBe(String(BINARY.length));
    expect(binary.bytes).toEqual(BINARY);
  });

  it.each([
    ['an unknown object', '0123456789abcdef0123456789abcdef01234567'],
    ['a tree', 'main:lib'],
    ['a commit', 'main'],
    ['an option-like name', '--batch'],
  ])('answers 404 Blob Not Found for %s', async (_case, sha) => {
    for (const suffix of ['', '/raw']) {
      const response = await get(repo(`blobs/${encodeURIComponent(sha)}${suffix}`));
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: '404 Blob Not Found' });
    }
  });

  it('counts blobs over 10 MB against the large_blob limit: 5 a minute', async () => {
    const { project, dir } = await createProject(fx.owner);
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 'x');
    const bigSha = await writeBlob(dir, big);
    const smallSha = await writeBlob(dir, 'small\n');
    const blobs = `/projects/${project.id}/repository/blobs`;
    const { statuses, limited, reader } = await inOneMinute(async () => {
      const reader = await server.factories.user();
      const codes: number[] = [];
      for (let i = 0; i < 4; i++) {
        const response = await fetch(`${server.api}${blobs}/${bigSha}/raw`, {
          headers: { 'PRIVATE-TOKEN': reader.token },
        });
        codes.push(response.status);
        expect(response.headers.get('content-length')).toBe(String(big.length));
        if (i > 0) expect((await response.arrayBuffer()).byteLength).toBe(big.length);
        else {
          // The client goes away mid-blob: the server stops git rather than leave it blocked.
          await response.body?.cancel();
          await expect.poll(() => gitProcessesReading(bigSha), { timeout: 5000 }).toBe(0);
        }
      }
      const json = await get(`${blobs}/${bigSha}`, reader.token);
      codes.push(json.status);
      expect((json.body as Json).size).toBe(big.length);
      return { statuses: codes, limited: await get(`${blobs}/${bigSha}/raw`, reader.token), reader };
    });
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ message: 'Retry later' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-name')).toBe('throttle_large_blob');
    // Small blobs do not count.
    expect((await get(`${blobs}/${smallSha}/raw`, reader.token)).status).toBe(200);
  });
});

/** Saves a downloaded archive and lists its members with the standard tool for its format. */
async function listArchive(bytes: Buffer, format: string): Promise<string[]> {
  const file = path.join(work, `archive-${++counter}.${format}`);
  fs.writeFileSync(file, bytes);
  const tool =
    format === 'zip'
      ? await exec('unzip', ['-Z1', file])
      : await exec('tar', [format === 'tar' ? '-tf' : format === 'tar.gz' ? '-tzf' : '-tjf', file]);
  return tool.stdout.split('\n').filter(Boolean).sort();
}

/** One member's content, read back with the standard tools. */
async function readMember(bytes: Buffer, format: string, member: string): Promise<string> {
  const file = path.join(work, `member-${++counter}.${format}`);
  fs.writeFileSync(file, bytes);
  if (format === 'zip') return (await exec('unzip', ['-p', file, member])).stdout;
  const flag = format === 'tar' ? '-xOf' : format === 'tar.gz' ? '-xzOf' : '-xjOf';
  return (await exec('tar', [flag, file, member])).stdout;
}

/** Archives count against `repository_archive` (5 a minute a user): each download gets its own reader. */
async function download(suffix: string) {
  const reader = await server.factories.user();
  return getBytes(repo(suffix), reader.token);
}

describe('archives', () => {
  const prefix = () => `${fx.project.path}-main-${fx.merge}`;

  it.each([
    ['tar.gz', 'tar.gz', 'application/octet-stream', [0x1f, 0x8b]],
    ['tar', 'tar', 'application/octet-stream', []],
    ['tar.bz2', 'tar.bz2', 'application/octet-stream', [0x42, 0x5a, 0x68]],
    ['tbz', 'tar.bz2', 'application/octet-stream', [0x42, 0x5a, 0x68]],
    ['tbz2', 'tar.bz2', 'application/octet-stream', [0x42, 0x5a, 0x68]],
    ['tb2', 'tar.bz2', 'application/octet-stream', [0x42, 0x5a, 0x68]],
    ['bz2', 'tar.bz2', 'application/octet-stream', [0x42, 0x5a, 0x68]],
    ['zip', 'zip', 'application/zip', [0x50, 0x4b]],
  ])('streams archive.%s, which the standard tools open', async (format, kind, contentType, magic) => {
    const { response, bytes } = await download(`archive.${format}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(contentType);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${prefix()}.${format}"`);
    // Streamed, never collected first: no length is known up front.
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    expect([...bytes.subarray(0, magic.length)]).toEqual(magic);
    const members = await listArchive(bytes, kind);
    expect(members).toContain(`${prefix()}/README.md`);
    expect(members).toContain(`${prefix()}/lib/util/helpers.rb`);
    expect(members).toContain(`${prefix()}/docs/drafts/wip.md`);
    expect(await readMember(bytes, kind, `${prefix()}/lib/parser.rb`)).toBe(PARSER_V2);
  });

  it('defaults to tar.gz on /archive, anonymously for a public project', async () => {
    const { response, bytes } = await getBytes(repo('archive'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${prefix()}.tar.gz"`);
    expect(await listArchive(bytes, 'tar.gz')).toContain(`${prefix()}/image.bin`);
  });

  it('archives a ref, a path and leaves out excluded paths', async () => {
    const { response, bytes } = await download(
      'archive.tar?sha=topic%2Fnested&path=docs&exclude_paths[]=docs/drafts&include_lfs_blobs=false',
    );
    const named = `${fx.project.path}-topic-nested-${fx.feature1}-docs`;
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${named}.tar"`);
    expect(await listArchive(bytes, 'tar')).toEqual([
      `${named}/`,
      `${named}/docs/`,
      `${named}/docs/manual.md`,
    ]);
    const bySha = await download(`archive.zip?sha=${fx.base}&path=bin/run`);
    const shaNamed = `${fx.project.path}-${fx.base}-${fx.base}-bin-run`;
    expect(await listArchive(bySha.bytes, 'zip')).toEqual([
      `${shaNamed}/`,
      `${shaNamed}/bin/`,
      `${shaNamed}/bin/run`,
    ]);
    const reader = await server.factories.user();
    const head = await fetch(`${server.api}${repo('archive.tbz')}`, {
      method: 'HEAD',
      headers: { 'PRIVATE-TOKEN': reader.token },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-disposition')).toBe(`attachment; filename="${prefix()}.tbz"`);
  });

  it('hands the handler a stream, never a buffer', async () => {
    const result = await repositoryHandlers.getRepositoryArchiveInFormat({
      params: { id: fx.project.id, format: 'tar' },
      subject: await server.services.projects.find(fx.owner.caller, fx.project.id),
      body: undefined,
      caller: fx.owner.caller,
      services: server.services,
      request: { apiPath: '/', query: [], externalUrl: server.url },
    });
    expect(result.stream).toBeInstanceOf(Readable);
    const chunks: Buffer[] = [];
    for await (const chunk of result.stream as Readable) chunks.push(chunk as Buffer);
    expect(await listArchive(Buffer.concat(chunks), 'tar')).toContain(`${prefix()}/CHANGES.md`);
    const raw = await repositoryHandlers.getRepositoryBlobRaw({
      params: { id: fx.project.id, sha: await revParse('main:README.md') },
      subject: await server.services.projects.find(fx.owner.caller, fx.project.id),
      body: undefined,
      caller: fx.owner.caller,
      services: server.services,
      request: { apiPath: '/', query: [], externalUrl: server.url },
    });
    expect(raw.stream).toBeInstanceOf(Readable);
    (raw.stream as Readable).destroy();
  });

  it.each([
    ['a sha that names no commit', 'archive.zip?sha=nope'],
    ['a path that does not exist', 'archive?path=nowhere'],
  ])('answers 404 File Not Found for %s', async (_case, suffix) => {
    const { response, bytes } = await download(suffix);
    expect(response.status).toBe(404);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual({ message: '404 File Not Found' });
  });

  it('answers 404 for an empty repository and 400 for an unknown format', async () => {
    const { project } = await createProject(fx.owner, { initialize_with_readme: false });
    const empty = await server.request('GET', `/projects/${project.id}/repository/archive.zip`, {
      token: (await server.factories.user()).token,
    });
    expect(empty.status).toBe(404);
    expect(empty.body).toEqual({ message: '404 File Not Found' });
    const unknown = await server.request('GET', repo('archive.rar'), {
      token: (await server.factories.user()).token,
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ error: 'format does not have a valid value' });
  });

  it('limits archives to 5 a minute per user, across both routes', async () => {
    const { statuses, limited } = await inOneMinute(async () => {
      const reader = await server.factories.user();
      const codes: number[] = [];
      for (const suffix of ['archive', 'archive.zip', 'archive.tar', 'archive.tar.bz2', 'archive']) {
        const { response } = await getBytes(repo(suffix), reader.token);
        codes.push(response.status);
      }
      return {
        statuses: codes,
        limited: await server.request('GET', repo('archive.zip'), { token: reader.token }),
      };
    });
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ message: 'Retry later' });
    expect(limited.headers.get('ratelimit-name')).toBe('throttle_repository_archive');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('compare', () => {
  const webUrl = () => `${server.url}/${fx.project.path_with_namespace}`;
  const byPath = (body: unknown) =>
    Object.fromEntries(((body as Json).diffs as Json[]).map((diff) => [diff.new_path as string, diff]));

  it('compares from the merge base: commits oldest first, and every kind of change', async () => {
    const response = await get(repo(`compare?from=${fx.main1}&to=feature`));
    expect(response.status).toBe(200);
    const body = response.body as Json & { commits: Json[]; commit: Json };
    expect(body.commits.map((commit) => commit.id)).toEqual([fx.feature1, fx.feature2]);
    expect(body.commit).toEqual(body.commits[1]);
    expect(body.commits[0]).toMatchObject({
      short_id: fx.feature1.slice(0, 11),
      title: 'Handle empty input',
      author_name: 'bob',
      author_email: 'bob@example.com',
      parent_ids: [fx.base],
      trailers: { 'Signed-off-by': 'bob <bob@example.com>' },
      web_url: `${webUrl()}/-/commit/${fx.feature1}`,
    });
    expect(body.compare_timeout).toBe(false);
    expect(body.compare_same_ref).toBe(false);
    expect(body.web_url).toBe(`${webUrl()}/-/compare/${fx.base}...${fx.feature2}`);

    const diffs = byPath(body);
    // main's own change to the helpers is not part of a merge-base comparison.
    expect(Object.keys(diffs).sort()).toEqual([
      '.gitattributes',
      'CHANGES.md',
      'bin/run',
      'data/points.csv',
      'docs/manual.md',
      'image.bin',
      'lib/parser.rb',
      'package-lock.json',
    ]);
    expect(diffs['lib/parser.rb']).toEqual({
      diff: '@@ -1,3 +1,5 @@\n def parse(text)\n+  return [] if text.empty?\n+\n   text.split\n end\n',
      new_path: 'lib/parser.rb',
      old_path: 'lib/parser.rb',
      a_mode: '100644',
      b_mode: '100644',
      new_file: false,
      renamed_file: false,
      deleted_file: false,
      generated_file: false,
    });
    expect(diffs['docs/manual.md']).toMatchObject({
      diff: '',
      old_path: 'docs/guide.md',
      renamed_file: true,
      new_file: false,
    });
    expect(diffs['bin/run']).toMatchObject({
      diff: '@@ -1,2 +0,0 @@\n-#!/bin/sh\n-echo run\n',
      a_mode: '100755',
      b_mode: '0',
      deleted_file: true,
    });
    expect(diffs['.gitattributes']).toMatchObject({
      diff: '@@ -0,0 +1 @@\n+data/*.csv gitlab-generated\n',
      a_mode: '0',
      b_mode: '100644',
      new_file: true,
    });
    expect(diffs['image.bin'].diff).toBe('Binary files a/image.bin and b/image.bin differ\n');
    expect(diffs['data/points.csv'].generated_file).toBe(true);
    expect(diffs['package-lock.json'].generated_file).toBe(true);
    expect(diffs['CHANGES.md'].generated_file).toBe(false);
  });

  it('compares directly with straight=true', async () => {
    const response = await get(repo(`compare?from=${fx.main1}&to=feature&straight=true`));
    const body = response.body as Json;
    expect(body.web_url).toBe(`${webUrl()}/-/compare/${fx.main1}...${fx.feature2}`);
    expect(byPath(body)['lib/util/helpers.rb']).toMatchObject({
      diff: '@@ -1,2 +1 @@\n-# Helpers for the parser\n module Helpers; end\n',
    });
    expect((body.commits as Json[]).length).toBe(2);
  });

  it('adds the unified diff headers with unidiff=true', async () => {
    const diffs = byPath((await get(repo(`compare?from=${fx.main1}&to=feature&unidiff=true`))).body);
    expect(diffs['lib/parser.rb'].diff).toMatch(
      /^--- a\/lib\/parser\.rb\n\+\+\+ b\/lib\/parser\.rb\n@@ -1,3 \+1,5 @@\n/,
    );
    expect(diffs['.gitattributes'].diff).toMatch(/^--- \/dev\/null\n\+\+\+ b\/\.gitattributes\n@@/);
    expect(diffs['bin/run'].diff).toMatch(/^--- a\/bin\/run\n\+\+\+ \/dev\/null\n@@/);
    expect(diffs['image.bin'].diff).toBe('Binary files a/image.bin and b/image.bin differ\n');
    expect(diffs['docs/manual.md'].diff).toBe('');
  });

  it('reports the same ref, and compares unrelated histories from the empty tree', async () => {
    const same = await get(repo(`compare?from=main&to=${fx.merge}`));
    expect(same.body).toEqual({
      commit: null,
      commits: [],
      diffs: [],
      compare_timeout: false,
      compare_same_ref: true,
      web_url: `${webUrl()}/-/compare/${fx.merge}...${fx.merge}`,
    });
    const unrelated = (await get(repo('compare?from=orphan&to=topic/nested'))).body as Json;
    expect((unrelated.commits as Json[]).map((commit) => commit.id)).toEqual([
      fx.readme,
      fx.base,
      fx.feature1,
    ]);
    expect(((unrelated.diffs as Json[]) ?? []).every((diff) => diff.new_file === true)).toBe(true);
    expect(unrelated.web_url).toBe(`${webUrl()}/-/compare/${fx.orphan}...${fx.feature1}`);
  });

  it('accepts its own project as from_project_id and refuses any other', async () => {
    const own = await get(repo(`compare?from=${fx.base}&to=${fx.feature1}&from_project_id=${fx.project.id}`));
    expect(own.status).toBe(200);
    const other = await get(repo(`compare?from=${fx.base}&to=${fx.feature1}&from_project_id=999999`));
    expect(other.status).toBe(400);
    expect(other.body).toEqual({
      message: `Target project id:999999 is not a fork of project id:${fx.project.id}`,
    });
  });

  it('answers 404 Ref Not Found for an unknown ref and 400 for a missing one', async () => {
    for (const query of ['from=nope&to=main', 'from=main&to=nope', 'from=--output=x&to=main']) {
      const response = await get(repo(`compare?${query}`));
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: '404 Ref Not Found' });
    }
    const missing = await get(repo('compare?from=main'));
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'to is missing' });
  });

  it('takes the merge base from the walk when one side contains the other', async () => {
    const ahead = (await get(repo(`compare?from=${fx.feature1}&to=feature`))).body as Json;
    expect((ahead.commits as Json[]).map((commit) => commit.id)).toEqual([fx.feature2]);
    expect(ahead.web_url).toBe(`${webUrl()}/-/compare/${fx.feature1}...${fx.feature2}`);
    expect(Object.keys(byPath(ahead)).length).toBeGreaterThan(0);
    // `to` is already in `from`: nothing to show, from `to` itself.
    const behind = (await get(repo(`compare?from=main&to=${fx.feature1}`))).body as Json;
    expect(behind).toEqual({
      commit: null,
      commits: [],
      diffs: [],
      compare_timeout: false,
      compare_same_ref: false,
      web_url: `${webUrl()}/-/compare/${fx.feature1}...${fx.feature1}`,
    });
  });

  it('compares the new head of a moved branch, never the comparison kept for its old one', async () => {
    const { project, dir } = await createProject(fx.owner);
    const start = await gitText(['rev-parse', 'main'], { gitDir: dir });
    const compare = async () =>
      (await get(`/projects/${project.id}/repository/compare?from=${start}&to=main`)).body as Json;
    const advanceMain = async (parent: string, day: string, message: string, file: string) => {
      const sha = await makeCommit(dir, {
        parents: [parent],
        date: `2026-03-${day}T10:00:00Z`,
        message,
        files: { [file]: `${file}\n` },
      });
      await gitText(['update-ref', 'refs/heads/main', sha], { gitDir: dir });
      return sha;
    };
    const first = await advanceMain(start, '01', 'First', 'one.txt');
    const before = await compare();
    expect((before.commits as Json[]).map((commit) => commit.title)).toEqual(['First']);
    expect(await compare()).toEqual(before);
    const second = await advanceMain(first, '02', 'Second', 'two.txt');
    const after = await compare();
    expect((after.commits as Json[]).map((commit) => commit.title)).toEqual(['First', 'Second']);
    expect((after.diffs as Json[]).map((diff) => diff.new_path)).toEqual(['one.txt', 'two.txt']);
    expect(after.web_url).toContain(`...${second}`);
  });

  it('applies the diff limits: an oversized patch is emptied, a 1001st file overflows', async () => {
    const { project, dir } = await createProject(fx.owner);
    const start = await gitText(['rev-parse', 'main'], { gitDir: dir });
    const bigText = Array.from(
      { length: 6000 },
      (_, i) => `line ${i} of a patch that is far too large\n`,
    ).join('');
    const big = await makeCommit(dir, {
      parents: [start],
      date: '2026-02-01T10:00:00Z',
      message: 'Big',
      files: { 'big.txt': bigText, 'small.txt': 'small\n' },
    });
    const one = await writeBlob(dir, 'x\n');
    const files: Record<string, FileSpec> = {};
    for (let i = 0; i < 1001; i++)
      files[`many/f${String(i).padStart(4, '0')}.txt`] = { mode: '100644', sha: one };
    const many = await makeCommit(dir, {
      parents: [big],
      date: '2026-02-02T10:00:00Z',
      message: 'Many',
      files,
    });

    const limited = (await get(`/projects/${project.id}/repository/compare?from=${start}&to=${big}`))
      .body as Json;
    const diffs = Object.fromEntries((limited.diffs as Json[]).map((diff) => [diff.new_path, diff]));
    expect(diffs['big.txt']).toMatchObject({ diff: '', new_file: true });
    expect(diffs['small.txt'].diff).toBe('@@ -0,0 +1 @@\n+small\n');
    expect(limited.compare_timeout).toBe(false);

    const overflow = (await get(`/projects/${project.id}/repository/compare?from=${big}&to=${many}`))
      .body as Json;
    expect((overflow.diffs as Json[]).length).toBe(1000);
    expect(overflow.compare_timeout).toBe(true);
  });
});

describe('contributors', () => {
  const owner = () => ({ name: fx.owner.user.name, email: fx.owner.user.email });
  const entry = (name: string, email: string, commits: number) => ({
    name,
    email,
    commits,
    additions: 0,
    deletions: 0,
  });

  it('counts commits per author email, merges left out, fewest commits first by default', async () => {
    const response = await get(repo('contributors'));
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      entry('Carol Carver', 'carol@example.com', 1),
      entry('bob', 'bob@example.com', 1),
      entry(owner().name, owner().email, 1),
      entry('Alice Arden', 'alice@example.com', 2),
    ]);
    expect(response.headers.get('x-total')).toBe('4');
  });

  it.each([
    ['commits', 'desc', ['alice', 'carol', 'bob', 'owner']],
    ['name', 'asc', ['alice', 'bob', 'carol', 'owner']],
    ['name', 'desc', ['owner', 'carol', 'bob', 'alice']],
    ['email', 'asc', ['alice', 'bob', 'carol', 'owner']],
  ])('orders by %s %s', async (orderBy, sort, expected) => {
    const response = await get(repo(`contributors?order_by=${orderBy}&sort=${sort}`));
    expect((response.body as Json[]).map((c) => (c.email as string).split(/[@-]/)[0])).toEqual(expected);
  });

  it('reads another ref and paginates', async () => {
    const response = await get(repo('contributors?ref=topic/nested&per_page=2&page=2&order_by=email'));
    expect(response.body).toEqual([entry(owner().name, owner().email, 1)]);
    expect(response.headers.get('x-total')).toBe('3');
    expect(response.headers.get('x-total-pages')).toBe('2');
    expect(response.headers.get('x-prev-page')).toBe('1');
  });

  it('answers 404 for a ref that names no commit, and for an empty repository', async () => {
    const unknown = await get(repo('contributors?ref=nope'));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Not Found' });
    const { project } = await createProject(fx.owner, { initialize_with_readme: false });
    const empty = await get(`/projects/${project.id}/repository/contributors`);
    expect(empty.status).toBe(404);
    const invalid = await get(repo('contributors?order_by=date'));
    expect(invalid.body).toEqual({ error: 'order_by does not have a valid value' });
  });
});

describe('merge base', () => {
  it('finds the common ancestor of branches, tags and SHAs', async () => {
    const response = await get(repo(`merge_base?refs[]=topic/nested&refs[]=${fx.main1}`));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: fx.base,
      title: 'Add the parser',
      author_name: 'Alice Arden',
      parent_ids: [fx.readme],
      web_url: `${server.url}/${fx.project.path_with_namespace}/-/commit/${fx.base}`,
    });
    const commaSeparated = await get(repo(`merge_base?refs=feature,${fx.main1}`));
    expect((commaSeparated.body as Json).id).toBe(fx.base);
    const three = await get(repo(`merge_base?refs[]=main&refs[]=feature&refs[]=${fx.feature1}`));
    expect((three.body as Json).id).toBe(fx.feature2);
  });

  it.each([
    ['no refs', '', 400, { error: 'refs is missing' }],
    ['one ref', '?refs[]=main', 400, { message: 'Provide at least 2 refs' }],
    ['an unknown ref', '?refs[]=main&refs[]=nope', 400, { message: 'Could not find ref: nope' }],
    ['unknown refs', '?refs[]=x1&refs[]=main&refs[]=x2', 400, { message: 'Could not find refs: x1, x2' }],
    ['unrelated histories', '?refs[]=main&refs[]=orphan', 404, { message: '404 Merge Base Not Found' }],
  ])('answers %s with GitLab’s error', async (_case, query, status, body) => {
    const response = await get(repo(`merge_base${query}`));
    expect(response.status).toBe(status);
    expect(response.body).toEqual(body);
  });
});

describe('who may read the repository', () => {
  type Role = 'anonymous' | 'outsider' | 'external' | 'guest' | 'reporter' | 'admin';
  const cases: Array<[VisibilityName, Role, number]> = [
    ['public', 'anonymous', 200],
    ['internal', 'anonymous', 404],
    ['internal', 'outsider', 200],
    ['internal', 'external', 404],
    ['private', 'anonymous', 404],
    ['private', 'outsider', 404],
    ['private', 'guest', 403],
    ['private', 'reporter', 200],
    ['private', 'admin', 200],
  ];

  it.each(cases)('a %s project, %s: every read answers %i', async (visibility, role, status) => {
    const owner = await server.factories.user();
    const project = await server.factories.project({ owner, visibility, initialize_with_readme: true });
    let token: string | undefined;
    if (role !== 'anonymous') {
      const caller = await server.factories.user({ admin: role === 'admin', external: role === 'external' });
      if (role === 'guest') await server.factories.member(project, caller.user, AccessLevel.Guest);
      if (role === 'reporter') await server.factories.member(project, caller.user, AccessLevel.Reporter);
      token = caller.token;
    }
    const dir = server.services.storage.diskPath('default', project.id);
    const readme = await gitText(['rev-parse', 'main:README.md'], { gitDir: dir });
    const base = `/projects/${project.id}/repository`;
    const reads = [
      'tree',
      `blobs/${readme}`,
      `blobs/${readme}/raw`,
      'compare?from=main&to=main',
      'contributors',
      'merge_base?refs[]=main&refs[]=main',
      // Anonymous archives all count against one address; the archive tests use that budget.
      ...(role === 'anonymous' ? [] : ['archive.zip']),
    ];
    for (const read of reads) {
      const response = await server.request('GET', `${base}/${read}`, { token });
      expect(response.status, read).toBe(status);
      if (status === 404) expect(response.body).toEqual({ message: '404 Project Not Found' });
      if (status === 403) expect(response.body).toEqual({ message: '403 Forbidden' });
    }
  });

  it('accepts a read_api token and refuses one without an API scope', async () => {
    const readApi = await server.factories.token(fx.owner.user, ['read_api']);
    expect((await get(repo('tree'), readApi)).status).toBe(200);
    const repositoryOnly = await server.factories.token(fx.owner.user, ['read_repository']);
    const refused = await get(repo('tree'), repositoryOnly);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'insufficient_scope' });
  });
});
