import { git } from './git.js';

export interface CommitStats {
  additions: number;
  deletions: number;
  total: number;
}

/**
 * Lines added and deleted by each commit against its first parent (a root commit against the empty
 * tree), for many commits in one `git log` call. Binary files count 0, as in GitLab.
 */
export async function commitStats(dir: string, ids: string[]): Promise<Map<string, CommitStats>> {
  const stats = new Map<string, CommitStats>();
  const unique = [...new Set(ids)];
  if (unique.length === 0) return stats;
  const { stdout } = await git(
    ['log', '--no-walk=unsorted', '--stdin', '--format=%x01%H', '--numstat', '--diff-merges=first-parent'],
    { gitDir: dir, input: `${unique.join('\n')}\n` },
  );
  let current: CommitStats | undefined;
  for (const line of stdout.toString('utf8').split('\n')) {
    if (line.startsWith('\x01')) {
      current = { additions: 0, deletions: 0, total: 0 };
      stats.set(line.slice(1), current);
      continue;
    }
    const match = /^(\d+|-)\t(\d+|-)\t/.exec(line);
    if (!match || !current) continue;
    const additions = match[1] === '-' ? 0 : Number(match[1]);
    const deletions = match[2] === '-' ? 0 : Number(match[2]);
    current.additions += additions;
    current.deletions += deletions;
    current.total += additions + deletions;
  }
  return stats;
}
