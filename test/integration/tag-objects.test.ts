/**
 * Tag details read from the ref store and the object reader say what `git for-each-ref` says, for every
 * shape of tag: lightweight, annotated, signed, a tag of a tag, a tag of a tree, leading blank lines.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { objectBatches } from '../../src/git/object-batch.js';
import { openGitRepository } from '../../src/git/repository.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-tag-objects-'));
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'A',
  GIT_AUTHOR_EMAIL: 'a@example.com',
  GIT_COMMITTER_NAME: 'C',
  GIT_COMMITTER_EMAIL: 'c@example.com',
};
const git = (args: string[], input?: string) =>
  execFileSync('git', ['--git-dir', dir, ...args], { env, input })
    .toString('utf8')
    .trim();

afterAll(() => {
  objectBatches.forget(dir);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** What for-each-ref reports for a tag, in GitTag's terms. */
function fromForEachRef(name: string) {
  const fields = [
    '%(objectname)',
    '%(objecttype)',
    '%(taggeremail)',
    '%(taggerdate:unix)',
    '%(contents:signature)',
    '%(contents)',
  ];
  const [target, type, email, date, signature, ...rest] = git([
    'for-each-ref',
    `--format=${fields.join('%00')}`,
    `refs/tags/${name}`,
  ]).split('\0');
  const contents = rest.join('\0');
  const annotated = type === 'tag';
  let commitId: string | null = null;
  try {
    commitId = git(['rev-parse', '--verify', '-q', `refs/tags/${name}^{commit}`]) || null;
  } catch {
    commitId = null;
  }
  return {
    name,
    target,
    annotated,
    message: annotated
      ? (signature ? contents.slice(0, -signature.length) : contents).replace(/\n+$/, '')
      : null,
    signature: annotated && signature ? signature : null,
    taggerEmail: annotated && email ? email.replace(/^<|>$/g, '') : null,
    taggerDate: annotated && date ? new Date(Number(date) * 1000) : null,
    commitId,
  };
}

describe('tag details without a process', () => {
  it('match for-each-ref for every shape of tag', async () => {
    git(['init', '--bare', '-q', '-b', 'main']);
    const blob = git(['hash-object', '-w', '--stdin'], 'hello\n');
    const tree = git(['mktree'], `100644 blob ${blob}\thello.txt\n`);
    const commit = git(['commit-tree', tree, '-m', 'first']);
    git(['update-ref', 'refs/heads/main', commit]);
    git(['tag', 'light', commit]);
    git(['tag', '-a', 'annotated', '-m', 'Release 1\n\nWith a body.\n', commit]);
    git(['tag', '-a', 'of-tree', '-m', 'a tree', tree]);
    git(['tag', '-a', 'of-blob', '-m', 'a blob', blob]);
    git(['tag', '-a', 'of-tag', '-m', 'a tag of a tag', 'annotated']);
    const signed = [
      `object ${commit}`,
      'type commit',
      'tag signed',
      'tagger T <t@example.com> 1700000000 +0100',
      '',
      'Signed release',
      '-----BEGIN PGP SIGNATURE-----',
      'not really a signature',
      '-----END PGP SIGNATURE-----',
      '',
    ].join('\n');
    git(['update-ref', 'refs/tags/signed', git(['hash-object', '-t', 'tag', '-w', '--stdin'], signed)]);
    const untagged = [
      `object ${commit}`,
      'type commit',
      'tag no-tagger',
      '',
      '',
      '',
      'After blank lines',
      '',
    ].join('\n');
    git([
      'update-ref',
      'refs/tags/no-tagger',
      git(['hash-object', '-t', 'tag', '-w', '--literally', '--stdin'], untagged),
    ]);

    const names = ['light', 'annotated', 'of-tree', 'of-blob', 'of-tag', 'signed', 'no-tagger'];
    const tags = await openGitRepository(dir).tags([...names, 'missing']);
    expect([...tags.keys()].sort()).toEqual([...names].sort());
    for (const name of names) expect(tags.get(name), name).toEqual(fromForEachRef(name));
    expect(tags.get('signed')!.signature).toMatch(/^-----BEGIN PGP SIGNATURE-----/);
    expect(tags.get('of-tag')!.commitId).toBe(commit);
  });
});
