/**
 * The cold mode: endpoints whose every request names a different object (a file at a commit, a pair of
 * commits, a commit's tree), so that no cache the server keeps by object id can answer a request it saw
 * before. Each has a floor that runs the git command for the same objects, one per invocation.
 *
 * The objects are drawn with a seeded PRNG from the benchmark repository's main line, so every run asks
 * the same questions in the same order.
 */
import { execFileSync } from 'node:child_process';
import { gitEnv } from '../../src/git/git.js';
import { filePaths, random, type RepoShape } from './repo.js';

/** More than any endpoint here answers in a run (warm-up, closed and open loop); a wrap is logged. */
const ITEMS = 4_000;
/** Compared pairs are this many commits apart at most: a review's worth of history, not the whole line. */
const MAX_COMPARE_DISTANCE = 50;

export interface ColdEndpoint {
  name: string;
  /** One API path (after /api/v4) per request, used in order. */
  paths: string[];
  /** The git arguments answering the same question, one list per path. */
  floors: string[][];
  /** What the floor runs, for the report: one invocation's shape. */
  floorCommand: string;
}

/** Main's commits, newest first, from the repository the benchmark pushed. */
export function mainLine(gitDir: string): string[] {
  return execFileSync('git', [`--git-dir=${gitDir}`, 'rev-list', '--first-parent', 'main'], { env: gitEnv() })
    .toString()
    .trim()
    .split('\n');
}

/**
 * Cold endpoints of project `projectId` over `commits` (main's line, newest first); with no commits
 * (names only), their lists are empty.
 */
export function coldEndpoints(projectId: number, commits: string[], shape: RepoShape): ColdEndpoint[] {
  const p = `/projects/${projectId}`;
  const files = filePaths(shape.files);
  const rnd = random(23);
  const pick = <T>(list: T[]) => list[Math.floor(rnd() * list.length)];
  const count = commits.length > MAX_COMPARE_DISTANCE ? ITEMS : 0;

  const raw = Array.from({ length: count }, () => ({ commit: pick(commits), file: pick(files) }));
  const pairs = Array.from({ length: count }, () => {
    const to = Math.floor(rnd() * (commits.length - MAX_COMPARE_DISTANCE));
    return { from: commits[to + 1 + Math.floor(rnd() * MAX_COMPARE_DISTANCE)], to: commits[to] };
  });
  const trees = Array.from({ length: count }, () => pick(commits));
  return [
    {
      name: 'raw file (cold)',
      paths: raw.map(
        ({ commit, file }) => `${p}/repository/files/${encodeURIComponent(file)}/raw?ref=${commit}`,
      ),
      floors: raw.map(({ commit, file }) => ['log', '-1', '--format=%H', commit, '--', file]),
      floorCommand: 'git log -1 --format=%H <commit> -- <file>',
    },
    {
      name: 'compare (cold)',
      paths: pairs.map(({ from, to }) => `${p}/repository/compare?from=${from}&to=${to}`),
      floors: pairs.map(({ from, to }) => ['diff', from, to]),
      floorCommand: `git diff <from> <to>, to up to ${MAX_COMPARE_DISTANCE} commits after from`,
    },
    {
      name: 'tree, recursive p5 (cold)',
      paths: trees.map((commit) => `${p}/repository/tree?recursive=true&per_page=100&page=5&ref=${commit}`),
      floors: trees.map((commit) => ['ls-tree', '-r', '-t', commit]),
      floorCommand: 'git ls-tree -r -t <commit>',
    },
  ];
}

/** A function giving the next of `items` on each call; it starts over (and says so once) at the end. */
export function cycle<T>(items: readonly T[], name: string, log: (message: string) => void): () => T {
  let next = 0;
  return () => {
    if (next === items.length) log(`warning: ${name} used all its ${items.length} objects; starting over`);
    return items[next++ % items.length];
  };
}
