/**
 * A repository's refs read straight from its files backend (loose files under refs/ and packed-refs),
 * as `git for-each-ref` lists them, without a process. The reading is cached per repository and reused
 * while nothing under refs/ and no packed-refs changed: git writes every ref by renaming a lock file
 * into place, which changes its directory's modification time.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { LruCache } from '../core/lru.js';
import { repositoryGone } from './git.js';
import { isValidRefName } from './ref-names.js';

export interface StoredRef {
  /** The full ref name, `refs/heads/main`. */
  ref: string;
  sha: string;
}

interface Snapshot {
  signature: string;
  refs: StoredRef[];
}

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const snapshots = new LruCache<string, Snapshot>(256);

const statSignature = async (file: string) => {
  try {
    const stat = await fs.stat(file, { bigint: true });
    return `${stat.ino}:${stat.mtimeNs}:${stat.ctimeNs}:${stat.size}`;
  } catch {
    return '-';
  }
};

/**
 * Every repository has refs/: without it, the repository went away while it was read (its project was
 * deleted), which is the project's 404, as for every git command.
 */
async function assertPresent(gitDir: string): Promise<void> {
  try {
    await fs.access(path.join(gitDir, 'refs'));
  } catch {
    throw repositoryGone();
  }
}

/** Every directory below refs/ with its signature, and every file that may be a loose ref. */
async function walk(gitDir: string) {
  const dirs: string[] = [];
  const files: string[] = [];
  const visit = async (relative: string): Promise<void> => {
    dirs.push(`${relative}=${await statSignature(path.join(gitDir, relative))}`);
    let entries;
    try {
      entries = await fs.readdir(path.join(gitDir, relative), { withFileTypes: true });
    } catch {
      await assertPresent(gitDir);
      return;
    }
    await Promise.all(
      entries.map((entry) => {
        const child = `${relative}/${entry.name}`;
        if (entry.isDirectory()) return visit(child);
        if (entry.isFile() && isValidRefName(child)) files.push(child);
        return undefined;
      }),
    );
  };
  await visit('refs');
  return { dirs: dirs.sort(), files };
}

function parsePacked(text: string, into: Map<string, string>): void {
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#') || line.startsWith('^')) continue;
    const space = line.indexOf(' ');
    const sha = line.slice(0, space);
    const ref = line.slice(space + 1);
    if (OBJECT_ID.test(sha) && isValidRefName(ref)) into.set(ref, sha);
  }
}

const byteOrder = (a: StoredRef, b: StoredRef) => Buffer.compare(Buffer.from(a.ref), Buffer.from(b.ref));

/** Every ref under refs/ and the object it names (symbolic refs resolved), sorted as git sorts them. */
export async function readRefs(gitDir: string): Promise<StoredRef[]> {
  const [{ dirs, files }, packed] = await Promise.all([
    walk(gitDir),
    statSignature(path.join(gitDir, 'packed-refs')),
  ]);
  const signature = `${packed}|${dirs.join('|')}`;
  const cached = snapshots.get(gitDir);
  if (cached?.signature === signature) return cached.refs;

  const values = new Map<string, string>();
  try {
    parsePacked(await fs.readFile(path.join(gitDir, 'packed-refs'), 'utf8'), values);
  } catch {
    // No packed refs yet.
  }
  const symbolic = new Map<string, string>();
  await Promise.all(
    files.map(async (ref) => {
      let content: string;
      try {
        content = (await fs.readFile(path.join(gitDir, ref), 'utf8')).trim();
      } catch {
        // A ref deleted meanwhile is simply gone; a repository deleted meanwhile is the project's 404.
        await assertPresent(gitDir);
        return;
      }
      // A loose ref overrides its packed value.
      if (OBJECT_ID.test(content)) values.set(ref, content);
      else if (content.startsWith('ref: ')) symbolic.set(ref, content.slice(5));
      else values.delete(ref);
    }),
  );
  for (const [ref, target] of symbolic) {
    let name = target;
    for (let depth = 0; depth < 5 && symbolic.has(name); depth++) name = symbolic.get(name)!;
    const sha = values.get(name);
    if (sha) values.set(ref, sha);
  }
  const refs = [...values].map(([ref, sha]) => ({ ref, sha })).sort(byteOrder);
  snapshots.set(gitDir, { signature, refs });
  return refs;
}
