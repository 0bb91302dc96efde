/**
 * What merging a merge request writes: merged trees (`git merge-tree`, no worktree), merge and squash
 * commits, and rebases. Objects only; the branch moves through RepositoriesService.updateRefs.
 *
 * Rebasing replays commits with line-level merges, which git 2.39's merge-tree cannot aim at a chosen
 * base (`--merge-base` came in 2.40), so a rebase runs in a throwaway worktree of the bare repository:
 * its new objects land in the repository itself, and the worktree is removed whatever happens.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertObjectId } from './ref-names.js';
import { git, GitError, gitText } from './git.js';
import type { Signature } from './storage.js';

export interface CommitIdentity extends Signature {
  /** ISO 8601 or git's raw `<seconds> <zone>`; now when left out. */
  date?: string;
}

export interface WriteCommitOptions {
  tree: string;
  parents: string[];
  message: string;
  author: CommitIdentity;
  committer: CommitIdentity;
}

const identityEnv = (author: CommitIdentity, committer: CommitIdentity): Record<string, string> => ({
  GIT_AUTHOR_NAME: author.name,
  GIT_AUTHOR_EMAIL: author.email,
  ...(author.date ? { GIT_AUTHOR_DATE: author.date } : {}),
  GIT_COMMITTER_NAME: committer.name,
  GIT_COMMITTER_EMAIL: committer.email,
  ...(committer.date ? { GIT_COMMITTER_DATE: committer.date } : {}),
});

/** The tree of merging `source` into `target`; null when they conflict or share no history. */
export async function mergedTree(dir: string, target: string, source: string): Promise<string | null> {
  assertObjectId(target);
  assertObjectId(source);
  const result = await git(
    ['merge-tree', '--write-tree', '--no-messages', '--end-of-options', target, source],
    {
      gitDir: dir,
      okCodes: [1, 128],
    },
  );
  if (result.code !== 0) return null;
  return result.stdout.toString('utf8').split('\n')[0].trim();
}

/** Writes a commit object; the message goes through stdin, so its size is not an argument's. */
export async function writeCommit(dir: string, options: WriteCommitOptions): Promise<string> {
  assertObjectId(options.tree);
  for (const parent of options.parents) assertObjectId(parent);
  const parents = options.parents.flatMap((parent) => ['-p', parent]);
  return gitText(['commit-tree', options.tree, ...parents, '-F', '-'], {
    gitDir: dir,
    input: options.message,
    env: identityEnv(options.author, options.committer),
  });
}

/** The id of a commit's tree. */
export function treeOf(dir: string, commit: string): Promise<string> {
  assertObjectId(commit);
  return gitText(['rev-parse', '--verify', '--end-of-options', `${commit}^{tree}`], { gitDir: dir });
}

export type RebaseResult = { sha: string } | { conflict: string };

/**
 * Replays the commits of `head` that `onto` lacks on top of `onto`, as `git rebase` does (merge commits
 * are dropped, commits already upstream are skipped), keeping authors and making `committer` the
 * committer. The repository's hooks do not run.
 */
export async function rebase(
  dir: string,
  onto: string,
  head: string,
  committer: Signature,
): Promise<RebaseResult> {
  assertObjectId(onto);
  assertObjectId(head);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-rebase-'));
  const worktree = path.join(root, 'worktree');
  const env = {
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
  };
  const inWorktree = (args: string[], okCodes?: number[]) =>
    git(['-C', worktree, '-c', 'core.hooksPath=/dev/null', ...args], { env, okCodes });
  try {
    await git(['worktree', 'add', '--detach', '--quiet', worktree, head], { gitDir: dir });
    const result = await inWorktree(['rebase', '--quiet', onto], [1, 128]);
    if (result.code !== 0) {
      await inWorktree(['rebase', '--abort'], [1, 128]);
      return { conflict: result.stderr.trim().split('\n')[0] ?? 'rebase failed' };
    }
    return { sha: (await gitText(['-C', worktree, 'rev-parse', 'HEAD'])).trim() };
  } finally {
    await git(['worktree', 'remove', '--force', worktree], { gitDir: dir, okCodes: [128] }).catch(
      (err: unknown) => {
        if (!(err instanceof GitError)) throw err;
      },
    );
    fs.rmSync(root, { recursive: true, force: true });
    await git(['worktree', 'prune'], { gitDir: dir }).catch(() => undefined);
  }
}
