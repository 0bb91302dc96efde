/**
 * Reading commits out of a repository in one `git log` call, with fields separated by NUL bytes so
 * that no message or name can break the parsing.
 */
import { git } from './git.js';

export interface GitCommit {
  id: string;
  parentIds: string[];
  authorName: string;
  authorEmail: string;
  authoredDate: Date;
  committerName: string;
  committerEmail: string;
  committedDate: Date;
  /** The full message, as git stores it. */
  message: string;
  trailers: Record<string, string>;
  extendedTrailers: Record<string, string[]>;
}

const FIELDS = ['%H', '%P', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%B', '%(trailers:only,unfold)'];
const FORMAT = `${FIELDS.join('%x00')}%x00%x01`;

function parseTrailers(text: string) {
  const trailers: Record<string, string> = {};
  const extendedTrailers: Record<string, string[]> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    // Duplicate keys keep the last value; the extended form keeps them all.
    trailers[key] = value;
    (extendedTrailers[key] ??= []).push(value);
  }
  return { trailers, extendedTrailers };
}

export function parseCommits(output: string): GitCommit[] {
  return output
    .split('\x00\x01')
    .map((record) => record.replace(/^\n/, ''))
    .filter((record) => record.length > 0)
    .map((record) => {
      const [id, parents, an, ae, ad, cn, ce, cd, message, trailerText] = record.split('\x00');
      return {
        id,
        parentIds: parents ? parents.split(' ') : [],
        authorName: an,
        authorEmail: ae,
        authoredDate: new Date(ad),
        committerName: cn,
        committerEmail: ce,
        committedDate: new Date(cd),
        message,
        ...parseTrailers(trailerText ?? ''),
      };
    });
}

/** Commits from `git log` with the given revision and path arguments (e.g. `['-n', '20', 'main']`). */
export async function logCommits(dir: string, args: string[]): Promise<GitCommit[]> {
  const { stdout } = await git(['log', `--format=${FORMAT}`, ...args], { gitDir: dir });
  return parseCommits(stdout.toString('utf8'));
}

/**
 * `git log --boundary` over a range: its commits in log order, and the ids of the boundary commits (those
 * left out that a listed commit has as parent).
 */
export async function logWithBoundary(
  dir: string,
  args: string[],
): Promise<{ commits: GitCommit[]; boundary: string[] }> {
  const { stdout } = await git(['log', '--boundary', `--format=%m${FORMAT}`, ...args], { gitDir: dir });
  const commits: GitCommit[] = [];
  const boundary: string[] = [];
  // `%m` puts `-` before a boundary commit's id and `>` before the others'.
  for (const commit of parseCommits(stdout.toString('utf8'))) {
    const mark = commit.id[0];
    commit.id = commit.id.slice(1);
    if (mark === '-') boundary.push(commit.id);
    else commits.push(commit);
  }
  return { commits, boundary };
}

/** One commit by any revision that names it; null when it does not resolve to a commit. */
export async function readCommit(dir: string, revision: string): Promise<GitCommit | null> {
  const sha = await resolveCommit(dir, revision);
  if (!sha) return null;
  const [commit] = await logCommits(dir, ['-n', '1', sha, '--']);
  return commit ?? null;
}

/** Many commits by id, in one call, in the order asked. */
export async function readCommits(dir: string, ids: string[]): Promise<Map<string, GitCommit>> {
  const unique = [...new Set(ids)];
  const byId = new Map<string, GitCommit>();
  if (unique.length === 0) return byId;
  const { stdout } = await git(['log', '--no-walk=unsorted', '--stdin', `--format=${FORMAT}`], {
    gitDir: dir,
    input: `${unique.join('\n')}\n`,
  });
  for (const commit of parseCommits(stdout.toString('utf8'))) byId.set(commit.id, commit);
  return byId;
}

/**
 * The commit a revision (branch, tag, sha, `main~2`) names, or null. Option-like input is refused so
 * that user input can never be read as a flag.
 */
export async function resolveCommit(dir: string, revision: string): Promise<string | null> {
  if (!revision || revision.startsWith('-')) return null;
  const result = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`], {
    gitDir: dir,
    okCodes: [1, 128],
  });
  return result.code === 0 ? result.stdout.toString('utf8').trim() : null;
}

/** The first line of a message: GitLab's `title`. */
export const commitTitle = (message: string) => message.split('\n', 1)[0] ?? '';
