/**
 * Repository housekeeping, as GitLab schedules it after pushes (Gitaly's OptimizeRepository): cheap
 * checks decide what is worth doing, so that most pushes only extend the commit-graph.
 *
 * - commit-graph with changed-path Bloom filters: `git log -- path` skips commits that cannot touch it;
 * - pack-refs once loose refs pile up: listing refs reads one file;
 * - an incremental repack once loose objects or packs pile up, a full one when asked (`eager`);
 * - `prune` also drops unreachable objects older than the grace period.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { git } from './git.js';
import { countObjects } from './object-counts.js';
import { isBorrowing } from './object-sharing.js';

export type HousekeepingTask = 'auto' | 'eager' | 'prune';

/** Gitaly's thresholds, roughly: beyond them the work pays for itself. */
const LOOSE_OBJECTS_LIMIT = 1024;
const PACKS_LIMIT = 16;
const LOOSE_REFS_LIMIT = 16;

export interface HousekeepingReport {
  commitGraph: boolean;
  packedRefs: boolean;
  repacked: 'none' | 'incremental' | 'full';
  pruned: boolean;
}

async function countLooseRefs(gitDir: string): Promise<number> {
  let count = 0;
  const visit = async (dir: string): Promise<void> => {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    await Promise.all(
      entries.map((entry) =>
        entry.isDirectory() ? visit(path.join(dir, entry.name)) : entry.isFile() ? count++ : undefined,
      ),
    );
  };
  await visit(path.join(gitDir, 'refs'));
  return count;
}

/**
 * `lending`: forks borrow this repository's objects, so none is ever dropped (see object-sharing.ts).
 * A repository that borrows packs only its own objects, or it would copy the lender's.
 */
export async function housekeep(
  gitDir: string,
  task: HousekeepingTask,
  sharing: { lending: boolean } = { lending: false },
): Promise<HousekeepingReport> {
  const report: HousekeepingReport = {
    commitGraph: false,
    packedRefs: false,
    repacked: 'none',
    pruned: false,
  };
  const [looseRefs, objects, borrowing] = await Promise.all([
    countLooseRefs(gitDir),
    countObjects(gitDir),
    isBorrowing(gitDir),
  ]);
  if (task !== 'auto' || looseRefs > LOOSE_REFS_LIMIT) {
    await git(['pack-refs', '--all'], { gitDir });
    report.packedRefs = true;
  }
  if (task !== 'auto' || objects.packs > PACKS_LIMIT) {
    const args = ['repack', '-a', '-d', '-q'];
    // A bitmap covers one pack with every object it reaches: not possible while borrowing.
    args.push(borrowing ? '-l' : '--write-bitmap-index', borrowing ? '--no-write-bitmap-index' : '');
    if (sharing.lending) args.push('--keep-unreachable');
    await git(args.filter(Boolean), { gitDir });
    report.repacked = 'full';
  } else if (objects.loose > LOOSE_OBJECTS_LIMIT) {
    await git(['repack', '-d', '-q', ...(borrowing ? ['-l'] : [])], { gitDir });
    report.repacked = 'incremental';
  }
  if (task === 'prune' && !sharing.lending) {
    await git(['prune', '--expire=2.weeks.ago'], { gitDir });
    report.pruned = true;
  }
  // Incremental layers, merged as they grow; a full repack rewrites the whole graph.
  const split = report.repacked === 'full' ? '--split=replace' : '--split';
  await git(['commit-graph', 'write', '--reachable', '--changed-paths', split, '--size-multiple=4'], {
    gitDir,
  });
  report.commitGraph = true;
  return report;
}
