/**
 * Forks share objects with the root of their fork network through git alternates instead of copying
 * them: a fork's `objects/info/alternates` names the lender's object directory by a relative path, so
 * it survives the rename from `.creating-*` into place. Two rules keep every fork whole:
 *
 * - A lender never drops objects: its housekeeping keeps unreachable objects and never prunes (a fork
 *   may still point at commits the lender forgot), and git's own `gc --auto` is off for pushes.
 * - Before a lender's repository is removed, every borrower gets its own copy (`dissociate`): the
 *   deletion job does it before it removes anything, and the storage recovery leaves a lender in place
 *   while any repository still borrows from it.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { git } from './git.js';

const alternatesFile = (dir: string) => path.join(dir, 'objects', 'info', 'alternates');

/**
 * Makes `dir` (a repository being built) borrow `lenderDir`'s objects, then fetches `refspecs` from
 * `sourceDir`: objects the lender has are not copied; those only the source has (a fork of a fork) are.
 */
export async function borrowAndFetch(
  dir: string,
  lenderDir: string,
  sourceDir: string,
  refspecs: string[],
): Promise<void> {
  const objects = path.join(dir, 'objects');
  await fs.mkdir(path.join(objects, 'info'), { recursive: true });
  const relative = path.relative(objects, path.join(lenderDir, 'objects'));
  await fs.writeFile(alternatesFile(dir), `${relative}\n`);
  await git(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--', sourceDir, ...refspecs], {
    gitDir: dir,
  });
}

/** The repositories `dir` borrows objects from, as absolute paths (none for a repository of its own). */
export async function lendersOf(dir: string): Promise<string[]> {
  const text = await fs.readFile(alternatesFile(dir), 'utf8').catch(() => '');
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => path.dirname(path.resolve(path.join(dir, 'objects'), line)));
}

export async function isBorrowing(dir: string): Promise<boolean> {
  return (await lendersOf(dir)).length > 0;
}

/**
 * Gives a borrowing repository its own copy of every object it reaches, then stops borrowing. The
 * commit-graph, which may chain to the lender's, is rewritten. Safe to repeat; false if it borrowed
 * nothing.
 */
export async function dissociate(dir: string): Promise<boolean> {
  if (!(await isBorrowing(dir))) return false;
  const info = path.join(dir, 'objects', 'info');
  await fs.rm(path.join(info, 'commit-graph'), { force: true });
  await fs.rm(path.join(info, 'commit-graphs'), { recursive: true, force: true });
  // Without `-l`, pack-objects packs what the alternates hold too.
  await git(['repack', '-a', '-d', '-q', '--no-write-bitmap-index'], { gitDir: dir });
  await fs.rm(alternatesFile(dir), { force: true });
  await git(['commit-graph', 'write', '--reachable', '--changed-paths'], { gitDir: dir });
  return true;
}
