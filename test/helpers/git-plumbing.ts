/**
 * Commits, blobs and refs written straight into a project's bare repository with git plumbing, for
 * tests that need a history the API cannot make (fixed dates, other authors, merges, orphans) without
 * a clone.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git, gitText } from '../../src/git/git.js';

/** A file's content; `null` removes it; `{ mode, sha }` places an existing object (a submodule, a link). */
export type FileSpec = string | Buffer | null | { mode: string; sha: string };

export interface CommitSpec {
  parents: string[];
  /** Written on top of the base tree. */
  files?: Record<string, FileSpec>;
  /** The tree (or commit) to start from; the first parent's by default, `null` for an empty tree. */
  base?: string | null;
  /** The message byte for byte: end it with a newline as `git commit -m` would. */
  message: string;
  /** Author and committer; Ada Lovelace by default. */
  author?: { name: string; email: string };
  /** Author and committer date, in any form git reads (`2026-01-01T10:00:00Z`, `@1767225600 +0000`). */
  date: string;
}

export const ADA = { name: 'Ada Lovelace', email: 'ada@example.com' };

/** Writes `content` as a blob; returns its SHA. */
export const writeBlob = (gitDir: string, content: string | Buffer) =>
  gitText(['hash-object', '-w', '--stdin'], { gitDir, input: content });

/** Points `refs/heads/<branch>` at `sha`. */
export const setBranch = (gitDir: string, branch: string, sha: string) =>
  git(['update-ref', `refs/heads/${branch}`, sha], { gitDir });

/** A commit built in a private index; returns its SHA. No ref moves. */
export async function writeCommit(gitDir: string, spec: CommitSpec): Promise<string> {
  const index = path.join(os.tmpdir(), `forge-test-index-${crypto.randomBytes(6).toString('hex')}`);
  const author = spec.author ?? ADA;
  const env = {
    GIT_INDEX_FILE: index,
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_AUTHOR_DATE: spec.date,
    GIT_COMMITTER_NAME: author.name,
    GIT_COMMITTER_EMAIL: author.email,
    GIT_COMMITTER_DATE: spec.date,
  };
  try {
    const base = spec.base === undefined ? spec.parents[0] : spec.base;
    await git(base ? ['read-tree', base] : ['read-tree', '--empty'], { gitDir, env });
    const lines: string[] = [];
    for (const [file, content] of Object.entries(spec.files ?? {})) {
      if (content === null) lines.push(`0 ${'0'.repeat(40)}\t${file}`);
      else if (typeof content === 'object' && 'mode' in content)
        lines.push(`${content.mode} ${content.sha}\t${file}`);
      else lines.push(`100644 ${await writeBlob(gitDir, content)}\t${file}`);
    }
    if (lines.length)
      await git(['update-index', '--index-info'], { gitDir, env, input: `${lines.join('\n')}\n` });
    const tree = await gitText(['write-tree'], { gitDir, env });
    const parents = spec.parents.flatMap((parent) => ['-p', parent]);
    return await gitText(['commit-tree', tree, ...parents, '-F', '-'], { gitDir, env, input: spec.message });
  } finally {
    fs.rmSync(index, { force: true });
  }
}

/**
 * A commit whose tree holds one file, `file` containing its own name: the smallest distinct history
 * step, for tests about refs rather than content.
 */
export const writeOneFileCommit = (
  gitDir: string,
  parent: string | null,
  file: string,
  date: string,
  author = { name: 'Ada', email: 'ada@example.com' },
) =>
  writeCommit(gitDir, {
    parents: parent ? [parent] : [],
    base: null,
    files: { [file]: `${file}\n` },
    message: `add ${file}\n`,
    author,
    date,
  });
