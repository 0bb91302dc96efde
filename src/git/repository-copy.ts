/**
 * Copying a repository to another directory (a storage move's replication): fetched whole, verified
 * ref for ref and with `git fsck`, built under a name nothing reads until the caller renames it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { git, gitText } from './git.js';
import { borrowAndFetch } from './object-sharing.js';
import { readRefs } from './ref-store.js';
import { digestRefs } from './repository-state.js';

/** Where a copy to `destinationDir` is built: a `.moving-*` name beside it that nothing else reads. */
export const copyDir = (destinationDir: string) =>
  `${destinationDir}.moving-${crypto.randomBytes(4).toString('hex')}`;

/**
 * A fresh bare repository at `building` with every ref of `sourceDir` (fetched, so only objects its
 * refs reach travel), its HEAD, and the settings every repository gets. With `lenderDir`, objects the
 * lender has are borrowed instead of copied.
 */
export async function copyRepository(
  sourceDir: string,
  building: string,
  lenderDir: string | null,
): Promise<void> {
  await fs.mkdir(path.dirname(building), { recursive: true });
  await git(['init', '--bare', '--quiet', building]);
  const refspec = ['+refs/*:refs/*'];
  if (lenderDir) await borrowAndFetch(building, lenderDir, sourceDir, refspec);
  else
    await git(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--', sourceDir, ...refspec], {
      gitDir: building,
    });
  const head = await gitText(['symbolic-ref', 'HEAD'], { gitDir: sourceDir });
  await git(['symbolic-ref', 'HEAD', head], { gitDir: building });
}

/** The copy is good when its refs are the source's, one for one, and `git fsck` finds it whole. */
export async function verifyCopy(sourceDir: string, copyDir: string): Promise<void> {
  await verifyRefs(sourceDir, copyDir);
  await git(['fsck', '--no-progress', '--no-dangling'], { gitDir: copyDir });
}

/** The copy's refs are the source's, one for one. */
export async function verifyRefs(sourceDir: string, copyDir: string): Promise<void> {
  const [source, copy] = await Promise.all([readRefs(sourceDir), readRefs(copyDir)]);
  if (digestRefs(source) !== digestRefs(copy))
    throw new Error('Failed to verify the repository copy: its refs differ from the source');
}

/** A previous attempt's copy (its process died): only one copy to a destination runs at a time. */
export async function removeCopyLeftovers(destinationDir: string): Promise<void> {
  const prefix = `${path.basename(destinationDir)}.moving-`;
  const names = await fs.readdir(path.dirname(destinationDir)).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith(prefix)))
    await fs.rm(path.join(path.dirname(destinationDir), name), { recursive: true, force: true });
}

/** Removes every `.deleting-*` beside `dir`. */
export async function removeTrash(dir: string): Promise<void> {
  const prefix = `${path.basename(dir)}.deleting-`;
  const names = await fs.readdir(path.dirname(dir)).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith(prefix)))
    await fs.rm(path.join(path.dirname(dir), name), { recursive: true, force: true });
}
