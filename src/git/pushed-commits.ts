/**
 * What a push brings: the commits no existing ref reaches, and the files they add or change. During
 * `git push` the new objects sit in git's quarantine, which `env` points at.
 */
import { git } from './git.js';

export interface NewCommit {
  sha: string;
  authorName: string;
  authorEmail: string;
  committerName: string;
  committerEmail: string;
  message: string;
}

export interface ChangedFile {
  path: string;
  blob: string;
}

type Env = Record<string, string> | undefined;

/** Commits reachable from `tips` and from no ref of the repository. */
export async function newCommits(dir: string, tips: string[], env?: Env): Promise<NewCommit[]> {
  const { stdout } = await git(
    ['log', '--format=%x1e%H%x00%an%x00%ae%x00%cn%x00%ce%x00%B', ...tips, '--not', '--all'],
    { gitDir: dir, env },
  );
  return stdout
    .toString('utf8')
    .split('\x1e')
    .filter(Boolean)
    .map((record) => {
      const [sha, authorName, authorEmail, committerName, committerEmail, message] = record.split('\0');
      return { sha, authorName, authorEmail, committerName, committerEmail, message: message.trimEnd() };
    });
}

/** Files a commit adds, modifies, copies or renames (the destination), with their new blobs. */
export async function filesAddedOrChanged(dir: string, commit: string, env?: Env): Promise<ChangedFile[]> {
  const { stdout } = await git(
    ['diff-tree', '-r', '-z', '--no-commit-id', '--root', '--no-abbrev', '--diff-filter=AMCR', commit],
    { gitDir: dir, env },
  );
  const changed: ChangedFile[] = [];
  const tokens = stdout.toString('utf8').split('\0');
  for (let i = 0; i < tokens.length; i++) {
    if (!tokens[i].startsWith(':')) continue;
    const [, , , blob, status] = tokens[i].slice(1).split(' ');
    // Copies and renames name the source, then the destination.
    if (/^[CR]/.test(status)) i++;
    changed.push({ path: tokens[++i], blob });
  }
  return changed;
}

/** The sizes of blobs, in their order. */
export async function blobSizes(dir: string, blobs: string[], env?: Env): Promise<number[]> {
  const { stdout } = await git(['cat-file', '--batch-check=%(objectsize)'], {
    gitDir: dir,
    env,
    input: `${blobs.join('\n')}\n`,
  });
  return stdout.toString('utf8').trim().split('\n').map(Number);
}
