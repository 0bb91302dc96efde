/**
 * The API's commit builder writes the same trees git's own index would, while it reads and rewrites only
 * the directories on the changed paths. Each case is checked against a model: the whole tree flattened,
 * changed path by path, and written through a temporary index.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommitBuildError, type FileAction } from '../../src/git/commit-builder.js';
import { git, gitText } from '../../src/git/git.js';
import { countObjects } from '../../src/git/object-counts.js';
import { objectBatches } from '../../src/git/object-batch.js';
import { openGitRepository } from '../../src/git/repository.js';
import { ADA, writeBlob, writeCommit } from '../helpers/git-plumbing.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-builder-'));
const dir = path.join(root, 'r.git');
/** A name that is not UTF-8, as repositories made elsewhere may hold. */
const LATIN1_NAME = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]).toString('latin1');
let base: string;

beforeAll(async () => {
  await git(['init', '--bare', '-q', '-b', 'main', dir]);
  const link = await writeBlob(dir, 'README.md');
  base = await writeCommit(dir, {
    parents: [],
    base: null,
    files: {
      'README.md': '# readme\n',
      'dir/a.txt': 'a\n',
      'dir/sub/b.txt': 'b\n',
      'z.txt': 'z\n',
      'bin/keep.txt': 'keep\n',
      link: { mode: '120000', sha: link },
      mod: { mode: '160000', sha: 'f'.repeat(40) },
    },
    message: 'base\n',
    date: '2026-01-01T00:00:00Z',
  });
  // A file whose name is not UTF-8 and one with the executable bit, placed with plumbing.
  const latin1 = await writeBlob(dir, 'café\n');
  const script = await writeBlob(dir, '#!/bin/sh\n');
  base = await writeModel(base, [
    ['set', `bin/${LATIN1_NAME}`, '100644', latin1],
    ['set', 'dir/sub/run.sh', '100755', script],
  ]);
});

afterAll(() => {
  objectBatches.forget(dir);
  fs.rmSync(root, { recursive: true, force: true });
});

type ModelChange = ['set', string, string, string] | ['remove', string];

/** The model: `commit`'s tree flattened, changed, and written through a temporary index. */
async function writeModel(commit: string | null, changes: ModelChange[]): Promise<string> {
  const index = path.join(root, `index-${Math.random().toString(36).slice(2)}`);
  const env = { GIT_INDEX_FILE: index };
  try {
    await git(commit ? ['read-tree', commit] : ['read-tree', '--empty'], { gitDir: dir, env });
    const records = changes.map((change) =>
      change[0] === 'set'
        ? `${change[2]} ${change[3]}\t${change[1]}\0`
        : `0 ${'0'.repeat(40)}\t${change[1]}\0`,
    );
    // Removals first, so that a file may take a directory's place.
    records.sort((a, b) => Number(!a.startsWith('0 ')) - Number(!b.startsWith('0 ')));
    if (records.length)
      await git(['update-index', '-z', '--index-info'], {
        gitDir: dir,
        env,
        input: Buffer.from(records.join(''), 'latin1'),
      });
    const tree = await gitText(['write-tree'], { gitDir: dir, env });
    return await gitText(['commit-tree', tree, ...(commit ? ['-p', commit] : []), '-m', 'model'], {
      gitDir: dir,
      env: {
        GIT_AUTHOR_NAME: 'M',
        GIT_AUTHOR_EMAIL: 'm@x',
        GIT_COMMITTER_NAME: 'M',
        GIT_COMMITTER_EMAIL: 'm@x',
      },
    });
  } finally {
    fs.rmSync(index, { force: true });
  }
}

const treeOf = (commit: string) => gitText(['rev-parse', `${commit}^{tree}`], { gitDir: dir });
const blob = (content: string) => gitText(['hash-object', '--stdin'], { gitDir: dir, input: content });

function build(parent: string | null, actions: FileAction[]): Promise<string> {
  const repository = openGitRepository(dir);
  return repository.buildCommit({ parent, actions, message: 'built\n', author: ADA, committer: ADA });
}

const create = (filePath: string, content: string): FileAction => ({
  action: 'create',
  filePath,
  content: Buffer.from(content),
});

describe('the commit builder', () => {
  it.each<[string, FileAction[], (b: typeof blob) => Promise<ModelChange[]>]>([
    [
      'creates a file deep in new directories',
      [create('x/y/z.txt', 'z')],
      async (b) => [['set', 'x/y/z.txt', '100644', await b('z')]],
    ],
    [
      'updates a file and keeps its mode',
      [{ action: 'update', filePath: 'dir/sub/run.sh', content: Buffer.from('exit 0\n') }],
      async (b) => [['set', 'dir/sub/run.sh', '100755', await b('exit 0\n')]],
    ],
    [
      'removes the directories a deletion empties',
      [
        { action: 'delete', filePath: 'dir/sub/b.txt' },
        { action: 'delete', filePath: 'dir/sub/run.sh' },
      ],
      async () => [
        ['remove', 'dir/sub/b.txt'],
        ['remove', 'dir/sub/run.sh'],
      ],
    ],
    [
      'puts a file where it emptied a directory',
      [
        { action: 'delete', filePath: 'dir/a.txt' },
        { action: 'delete', filePath: 'dir/sub/b.txt' },
        { action: 'delete', filePath: 'dir/sub/run.sh' },
        create('dir', 'now a file'),
      ],
      async (b) => [
        ['remove', 'dir/a.txt'],
        ['remove', 'dir/sub/b.txt'],
        ['remove', 'dir/sub/run.sh'],
        ['set', 'dir', '100644', await b('now a file')],
      ],
    ],
    [
      'puts a directory where it deleted a file',
      [{ action: 'delete', filePath: 'z.txt' }, create('z.txt/inner', 'i')],
      async (b) => [
        ['remove', 'z.txt'],
        ['set', 'z.txt/inner', '100644', await b('i')],
      ],
    ],
    [
      'moves a file with its content and mode',
      [{ action: 'move', previousPath: 'dir/sub/run.sh', filePath: 'run.sh' }],
      async (b) => [
        ['remove', 'dir/sub/run.sh'],
        ['set', 'run.sh', '100755', await b('#!/bin/sh\n')],
      ],
    ],
    [
      'moves a file with new content',
      [
        {
          action: 'move',
          previousPath: 'dir/a.txt',
          filePath: 'dir/sub/a.txt',
          content: Buffer.from('moved'),
        },
      ],
      async (b) => [
        ['remove', 'dir/a.txt'],
        ['set', 'dir/sub/a.txt', '100644', await b('moved')],
      ],
    ],
    [
      'sets and clears the executable bit, and leaves a link alone',
      [
        { action: 'chmod', filePath: 'dir/a.txt', executeFilemode: true },
        { action: 'chmod', filePath: 'dir/sub/run.sh', executeFilemode: false },
        { action: 'chmod', filePath: 'link', executeFilemode: true },
      ],
      async (b) => [
        ['set', 'dir/a.txt', '100755', await b('a\n')],
        ['set', 'dir/sub/run.sh', '100644', await b('#!/bin/sh\n')],
      ],
    ],
    [
      'keeps a sibling whose name is not UTF-8',
      [create('bin/new.txt', 'n')],
      async (b) => [['set', 'bin/new.txt', '100644', await b('n')]],
    ],
    [
      'writes several blobs, and names that are UTF-8 or odd',
      [
        create('one.txt', '1'),
        create('ünï/cödé.txt', '2'),
        create('tab\there/new\nline.txt', '3'),
        { action: 'update', filePath: 'README.md', content: Buffer.from('4') },
      ],
      async (b) => [
        ['set', 'one.txt', '100644', await b('1')],
        ['set', Buffer.from('ünï/cödé.txt').toString('latin1'), '100644', await b('2')],
        ['set', 'tab\there/new\nline.txt', '100644', await b('3')],
        ['set', 'README.md', '100644', await b('4')],
      ],
    ],
    [
      'makes a submodule entry a file when it gets content',
      [{ action: 'update', filePath: 'mod', content: Buffer.from('plain') }],
      async (b) => [['set', 'mod', '100644', await b('plain')]],
    ],
  ])('%s, as an index would', async (_name, actions, changes) => {
    const commit = await build(base, actions);
    expect(await treeOf(commit)).toBe(await treeOf(await writeModel(base, await changes(blob))));
    expect(await gitText(['rev-parse', `${commit}^`], { gitDir: dir })).toBe(base);
    // Every object it wrote is whole and reachable.
    await git(['fsck', '--no-dangling', '--strict', commit], { gitDir: dir, okCodes: [0] });
  });

  it('builds the first commit of an empty repository', async () => {
    const commit = await build(null, [create('a/b.txt', 'first'), create('c.txt', '')]);
    const model = await writeModel(null, [
      ['set', 'a/b.txt', '100644', await blob('first')],
      ['set', 'c.txt', '100644', await blob('')],
    ]);
    expect(await treeOf(commit)).toBe(await treeOf(model));
    expect(await gitText(['rev-list', '--count', commit], { gitDir: dir })).toBe('1');
  });

  it('writes the empty tree when every file goes', async () => {
    const first = await build(null, [create('a/b.txt', 'first'), create('c.txt', 'second')]);
    const emptied = await build(first, [
      { action: 'delete', filePath: 'c.txt' },
      { action: 'delete', filePath: 'a/b.txt' },
    ]);
    expect(await treeOf(emptied)).toBe(await gitText(['hash-object', '-t', 'tree', '/dev/null']));
    await git(['fsck', '--no-dangling', '--strict', emptied], { gitDir: dir });
  });

  it('writes no object for a change it refuses', async () => {
    const before = await countObjects(dir);
    await expect(
      build(base, [create('fresh.txt', 'never written'), create('README.md', 'again')]),
    ).rejects.toThrow(new CommitBuildError('A file with this name already exists'));
    expect(await countObjects(dir)).toEqual(before);
  });

  it.each([
    ['.git/config'],
    ['.GIT/config'],
    ['a/.git./config'],
    ['.git  /config'],
    ['GIT~1/config'],
    ['.git::$INDEX_ALLOCATION/config'],
    ['.g\u200cit/config'],
  ])('refuses %j, which some file system takes for .git', async (filePath) => {
    await expect(build(base, [create(filePath, 'x')])).rejects.toThrow(
      new CommitBuildError(`invalid path: '${filePath}'`),
    );
  });
});
