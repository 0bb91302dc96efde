/** The repository reads through the real clients: python-gitlab and @gitbeaker/rest. */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitText } from '../../src/git/git.js';
import type { TestUser } from '../helpers/factories.js';
import { setBranch, writeCommit } from '../helpers/git-plumbing.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const exec = promisify(execFile);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-repository-clients-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const BINARY = Buffer.from([0x00, 0x01, 0x02, 0xff, 0x00]);
let counter = 0;

/** A commit on top of `parent`'s tree with `files` written, built with plumbing. */
const makeCommit = (
  dir: string,
  parent: string,
  files: Record<string, string | Buffer>,
  author: { name: string; email: string },
  date: string,
) => writeCommit(dir, { parents: [parent], files, author, date, message: `change ${++counter}\n` });

interface Fixture {
  owner: TestUser;
  id: number;
  path: string;
  readme: string;
  c1: string;
  feature: string;
  readmeBlob: string;
  binaryBlob: string;
}

let fx: Fixture;

/** main: README - c1 - main2; feature: c1 - feature. */
beforeAll(async () => {
  const owner = await server.factories.user();
  const created = await server.request('POST', '/projects', {
    token: owner.token,
    json: { name: 'client-reads', visibility: 'public', initialize_with_readme: true },
  });
  const { id, path: projectPath } = created.body as { id: number; path: string };
  const dir = server.services.storage.diskPath('default', id);
  const readme = await gitText(['rev-parse', 'main'], { gitDir: dir });
  const alice = { name: 'Alice', email: 'alice@example.com' };
  const c1 = await makeCommit(
    dir,
    readme,
    { 'lib/a.rb': 'A = 1\n', 'docs/intro.md': '# Intro\n', 'image.bin': BINARY },
    alice,
    '2026-01-01T10:00:00Z',
  );
  const feature = await makeCommit(
    dir,
    c1,
    { 'lib/a.rb': 'A = 2\n', 'lib/b/c.rb': 'C = 3\n' },
    { name: 'Bob', email: 'bob@example.com' },
    '2026-01-02T10:00:00Z',
  );
  const main2 = await makeCommit(dir, c1, { 'NOTES.md': 'notes\n' }, alice, '2026-01-03T10:00:00Z');
  await setBranch(dir, 'main', main2);
  await setBranch(dir, 'feature', feature);
  fx = {
    owner,
    id,
    path: projectPath,
    readme,
    c1,
    feature,
    readmeBlob: await gitText(['rev-parse', 'main:README.md'], { gitDir: dir }),
    binaryBlob: await gitText(['rev-parse', 'main:image.bin'], { gitDir: dir }),
  };
});

const RECURSIVE_MAIN = ['docs', 'lib', 'NOTES.md', 'README.md', 'docs/intro.md', 'image.bin', 'lib/a.rb'];

describe('python-gitlab', () => {
  it.skipIf(!pythonGitlab)(
    'reads tree, blobs, archives, compare, contributors and merge base (needs Debian python3-gitlab)',
    async () => {
      const stdout = await runPythonClient('python_gitlab_repository.py', [
        server.url,
        fx.owner.token,
        String(fx.id),
        fx.readmeBlob,
        fx.binaryBlob,
      ]);
      const zipPrefix = `${fx.path}-feature-${fx.feature}-lib`;
      const mainPrefix = `${fx.path}-main-`;
      const result = JSON.parse(stdout);
      expect(result).toMatchObject({
        root: [
          ['tree', 'docs'],
          ['tree', 'lib'],
          ['blob', 'NOTES.md'],
          ['blob', 'README.md'],
          ['blob', 'image.bin'],
        ],
        nested: ['lib/b', 'lib/a.rb', 'lib/b/c.rb'],
        offset_paths: RECURSIVE_MAIN,
        keyset_paths: RECURSIVE_MAIN,
        blob_sha: fx.readmeBlob,
        blob_text: '# client-reads\n',
        raw: '# client-reads\n',
        raw_binary: [...BINARY],
        zip_members: [
          `${zipPrefix}/`,
          `${zipPrefix}/lib/`,
          `${zipPrefix}/lib/a.rb`,
          `${zipPrefix}/lib/b/`,
          `${zipPrefix}/lib/b/c.rb`,
        ],
        compare_commits: [fx.feature],
        compare_paths: ['lib/a.rb', 'lib/b/c.rb'],
        straight_paths: ['NOTES.md', 'lib/a.rb', 'lib/b/c.rb'],
        contributors: [
          [fx.owner.user.email, 1],
          ['alice@example.com', 2],
        ],
        merge_base: fx.c1,
        missing_blob: [404, '404 Blob Not Found'],
        one_ref: [400, 'Provide at least 2 refs'],
      });
      for (const members of [result.tar_members, result.bz2_members] as string[][]) {
        expect(members.some((member) => member.startsWith(mainPrefix) && member.endsWith('/NOTES.md'))).toBe(
          true,
        );
      }
    },
  );
});

describe('@gitbeaker/rest', () => {
  it('reads tree, blobs, archives, compare, contributors and merge base', async () => {
    const api = new Gitlab({ host: server.url, token: fx.owner.token });
    const tree = await api.Repositories.allRepositoryTrees(fx.id, { recursive: true, perPage: 2 });
    expect(tree.map((entry) => entry.path)).toEqual(RECURSIVE_MAIN);
    const keyset = await api.Repositories.allRepositoryTrees(fx.id, {
      recursive: true,
      pagination: 'keyset',
      perPage: 3,
    });
    expect(keyset.map((entry) => entry.path)).toEqual(RECURSIVE_MAIN);
    const nested = await api.Repositories.allRepositoryTrees(fx.id, { path: 'lib', ref: 'feature' });
    expect(nested.map((entry) => [entry.type, entry.name])).toEqual([
      ['tree', 'b'],
      ['blob', 'a.rb'],
    ]);

    const blob = await api.Repositories.showBlob(fx.id, fx.readmeBlob);
    expect(blob).toMatchObject({ sha: fx.readmeBlob, encoding: 'base64', size: 15 });
    expect(Buffer.from(blob.content, 'base64').toString('utf8')).toBe('# client-reads\n');
    expect(await api.Repositories.showBlobRaw(fx.id, fx.readmeBlob)).toBe('# client-reads\n');
    const rawBinary = (await api.Repositories.showBlobRaw(fx.id, fx.binaryBlob)) as unknown as Blob;
    expect(Buffer.from(await rawBinary.arrayBuffer())).toEqual(BINARY);

    const archive = (await api.Repositories.showArchive(fx.id, {
      fileType: 'zip',
      sha: 'feature',
    })) as unknown as Blob;
    const file = path.join(work, 'archive.zip');
    fs.writeFileSync(file, Buffer.from(await archive.arrayBuffer()));
    const listed = (await exec('unzip', ['-Z1', file])).stdout.split('\n').filter(Boolean);
    expect(listed).toContain(`${fx.path}-feature-${fx.feature}/lib/b/c.rb`);

    // gitbeaker passes options it has no type for (`unidiff`) through to the query string.
    const options = { straight: true, unidiff: true } as { straight: boolean };
    const compare = await api.Repositories.compare(fx.id, 'main', 'feature', options);
    expect(compare.commits?.map((commit) => commit.id)).toEqual([fx.feature]);
    const diffs = compare.diffs as Array<{ new_path: string; diff: string }>;
    expect(diffs.find((diff) => diff.new_path === 'lib/a.rb')?.diff).toBe(
      '--- a/lib/a.rb\n+++ b/lib/a.rb\n@@ -1 +1 @@\n-A = 1\n+A = 2\n',
    );

    const contributors = await api.Repositories.allContributors(fx.id, { orderBy: 'name', sort: 'desc' });
    expect(contributors.map((contributor) => contributor.email)).toEqual([
      fx.owner.user.email,
      'alice@example.com',
    ]);
    const mergeBase = await api.Repositories.mergeBase(fx.id, ['main', 'feature']);
    expect(mergeBase.id).toBe(fx.c1);
    await expect(api.Repositories.mergeBase(fx.id, ['main', 'nope'])).rejects.toMatchObject({
      cause: { description: 'Could not find ref: nope' },
    });
  });
});
