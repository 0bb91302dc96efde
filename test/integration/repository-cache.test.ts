/**
 * Repository reads answered from what is kept by object id. Tree pages are cut from the listing kept by
 * tree id (src/git/tree-listing.ts): every page, offset or keyset, reads as the same page of an uncached
 * `git ls-tree` listing, and a moved ref lists its new tree. Compare finds the merge base from its walk
 * when it can: the same one `git merge-base` finds.
 */
import crypto from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { git } from '../../src/git/git.js';
import { objectBatches } from '../../src/git/object-batch.js';
import { setBranch, writeBlob, writeCommit, type FileSpec } from '../helpers/git-plumbing.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Entry = { id: string; name: string; type: string; path: string; mode: string };
let projectId: number;
let dir: string;
let first: string;

/** `git ls-tree -r -t` (or one level) of `rev:path`, ordered as the API orders it: trees, blobs, submodules. */
async function uncached(rev: string, path = '', recursive = true): Promise<Entry[]> {
  const args = ['ls-tree', '-z', ...(recursive ? ['-r', '-t'] : []), path ? `${rev}:${path}` : rev];
  const { stdout } = await git(args, { gitDir: dir });
  const entries = stdout
    .toString('utf8')
    .split('\0')
    .filter(Boolean)
    .map((record) => {
      const [meta, relative] = record.split('\t');
      const [mode, type, id] = meta.split(' ');
      const full = path ? `${path}/${relative}` : relative;
      return { id, name: full.slice(full.lastIndexOf('/') + 1), type, path: full, mode };
    });
  const rank: Record<string, number> = { tree: 0, blob: 1, commit: 2 };
  return entries.sort((a, b) => rank[a.type] - rank[b.type]);
}

const tree = (query: string) => server.request('GET', `/projects/${projectId}/repository/tree?${query}`);

beforeAll(async () => {
  const owner = await server.factories.user({ username: `trees-${crypto.randomBytes(3).toString('hex')}` });
  const created = await server.request('POST', '/projects', {
    token: owner.token,
    json: { name: 'tree-pages', initialize_with_readme: true, visibility: 'public' },
  });
  expect(created.status).toBe(201);
  projectId = (created.body as { id: number }).id;
  dir = server.services.storage.diskPath('default', projectId);
  const head = (await git(['rev-parse', 'main'], { gitDir: dir })).stdout.toString().trim();
  const files: Record<string, FileSpec> = {
    'lib/deep/er/parser.rb': 'parse\n',
    'bin/run': { mode: '100755', sha: await writeBlob(dir, '#!/bin/sh\n') },
    'vendor-lib': { mode: '160000', sha: 'b'.repeat(40) },
  };
  for (let m = 0; m < 4; m++)
    for (let f = 0; f < 9; f++) files[`src/mod${m}/file${f}.ts`] = `export const n = ${m * 10 + f};\n`;
  first = await writeCommit(dir, {
    parents: [head],
    message: 'Files\n',
    date: '2026-02-01T10:00:00Z',
    files,
  });
  await setBranch(dir, 'main', first);
});

afterEach(() => vi.restoreAllMocks());

describe('recursive tree pages', () => {
  it('read as the pages of an uncached listing at every size, through the last page and beyond', async () => {
    const all = await uncached(first);
    expect(all.length).toBeGreaterThan(40);
    for (const perPage of [1, 7, 20, 100]) {
      const pages = Math.ceil(all.length / perPage);
      for (let page = 1; page <= pages + 1; page++) {
        const response = await tree(`recursive=true&per_page=${perPage}&page=${page}`);
        expect(response.status).toBe(200);
        expect(response.body).toEqual(all.slice((page - 1) * perPage, page * perPage));
        expect(response.headers.get('x-total')).toBe(String(all.length));
        expect(response.headers.get('x-total-pages')).toBe(String(pages));
        expect(response.headers.get('x-page')).toBe(String(page));
        expect(response.headers.get('x-next-page')).toBe(page < pages ? String(page + 1) : '');
      }
    }
    const none = await tree('recursive=true&pagination=none');
    expect(none.body).toEqual(all);
  });

  it('read as an uncached listing of a path, by keyset, one level or all', async () => {
    const below = await uncached(first, 'src');
    expect(below.length).toBe(40);
    const seen: Entry[] = [];
    let url: string | undefined =
      `${server.api}/projects/${projectId}/repository/tree?path=src&recursive=true&pagination=keyset&per_page=7`;
    while (url) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      seen.push(...((await response.json()) as Entry[]));
      url = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    }
    expect(seen).toEqual(below);
    const level = await tree('path=src/mod2&per_page=4&page=3');
    expect(level.body).toEqual((await uncached(first, 'src/mod2', false)).slice(8, 12));
    const root = await tree('per_page=100');
    expect(root.body).toEqual(await uncached(first, '', false));
  });

  it('reads no tree object for a page of a listing read before, by branch or by commit', async () => {
    await tree('recursive=true&per_page=5&page=1');
    const ask = vi.spyOn(objectBatches, 'ask');
    const byBranch = await tree('recursive=true&per_page=5&page=4');
    const byCommit = await tree(`recursive=true&per_page=5&page=2&ref=${first}`);
    expect(byBranch.status).toBe(200);
    expect(byCommit.status).toBe(200);
    // Only the refs are resolved; no object's content is read.
    expect(ask.mock.calls.filter(([, , contents]) => contents)).toEqual([]);
  });

  it('lists the new tree of a ref that moved, and the old tree at the old commit', async () => {
    await setBranch(dir, 'moving', first);
    const before = await tree('ref=moving&recursive=true&per_page=100');
    expect(before.body).toEqual(await uncached(first));
    const second = await writeCommit(dir, {
      parents: [first],
      message: 'Move things\n',
      date: '2026-02-02T10:00:00Z',
      files: { 'src/mod1/file3.ts': null, 'src/mod1/added.ts': 'added\n', 'lib/deep/er/parser.rb': 'v2\n' },
    });
    await setBranch(dir, 'moving', second);
    const after = await tree('ref=moving&recursive=true&per_page=100');
    const expected = await uncached(second);
    expect(after.body).toEqual(expected);
    expect(expected).not.toEqual(before.body);
    expect((await tree(`ref=${first}&recursive=true&per_page=100`)).body).toEqual(before.body);
  });
});

describe('compare', () => {
  /** The commit the compare page's web_url starts from. */
  const base = async (from: string, to: string) => {
    const response = await server.request(
      'GET',
      `/projects/${projectId}/repository/compare?from=${from}&to=${to}`,
    );
    expect(response.status).toBe(200);
    return /compare\/([0-9a-f]+)\.\.\./.exec((response.body as { web_url: string }).web_url)?.[1];
  };
  const mergeBase = async (a: string, b: string) =>
    (await git(['merge-base', a, b], { gitDir: dir })).stdout.toString().trim();
  const commit = (parents: string[], name: string, day: number) =>
    writeCommit(dir, {
      parents,
      message: `${name}\n`,
      date: `2026-03-${String(day).padStart(2, '0')}T10:00:00Z`,
      files: { [`${name}.txt`]: `${name}\n` },
    });

  it('starts from the merge base git finds, for one fork point and for a criss-cross', async () => {
    const left1 = await commit([first], 'left1', 1);
    const right1 = await commit([first], 'right1', 2);
    const left2 = await commit([left1], 'left2', 3);
    expect(await base(right1, left2)).toBe(await mergeBase(right1, left2));
    expect(await base(right1, left2)).toBe(first);
    // Each side merges the other's first commit: two merge bases' worth of boundary.
    const leftMerge = await commit([left2, right1], 'left-merge', 4);
    const rightMerge = await commit([right1, left1], 'right-merge', 5);
    const expected = await mergeBase(rightMerge, leftMerge);
    expect([left1, right1]).toContain(expected);
    expect(await base(rightMerge, leftMerge)).toBe(expected);
  });
});
