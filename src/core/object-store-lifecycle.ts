/**
 * The two halves of "an object is written whole before a row names it" for families that keep objects.
 *
 * - `storeThenCommit` writes the objects, then runs the caller's transaction that inserts the rows; when
 *   the transaction fails, it removes the objects. Nothing is ever served from an object no row names:
 *   families find objects through their rows.
 * - A crash between the write and the commit leaves objects no row names. `sweepOrphans` (from a family's
 *   periodic job) removes those under a prefix that are older than a grace period and that no row names.
 *   The grace period must exceed the longest upload plus commit, so that the sweep never takes an object
 *   whose row is about to commit.
 *
 * Keys must be fresh (a unique segment, e.g. a row's id or a random one): removing a failed write's
 * object must never remove one a committed row names.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ObjectStore } from './object-store.js';

export interface ObjectToStore {
  key: string;
  /** A stream, or the path of a local file (left in place). */
  body: Readable | { file: string };
}

export interface StoredObject {
  key: string;
  size: number;
}

/**
 * Writes each object (in order), then runs `commit` with their sizes and answers what it answers. When a
 * write or `commit` fails, every object written is removed (best effort: what a failing removal leaves,
 * the sweep takes) and the first error is thrown.
 */
export async function storeThenCommit<T>(
  store: ObjectStore,
  objects: ObjectToStore | readonly ObjectToStore[],
  commit: (stored: StoredObject[]) => Promise<T>,
): Promise<T> {
  const list = Array.isArray(objects) ? (objects as readonly ObjectToStore[]) : [objects as ObjectToStore];
  const stored: StoredObject[] = [];
  try {
    for (const { key, body } of list) {
      const size = 'file' in body ? await store.putFile(key, body.file) : await store.putStream(key, body);
      stored.push({ key, size });
    }
    return await commit(stored);
  } catch (err) {
    // Destroyed so that the caller's remaining streams (e.g. the request body) stop.
    for (const { body } of list) if (!('file' in body)) body.destroy();
    await store.delete(stored.map((object) => object.key)).catch(() => undefined);
    throw err;
  }
}

/** A fresh key under `prefix` for `name`: `prefix/<uuid>/name`, never one a row already names. */
export function freshObjectKey(prefix: string, name: string): string {
  return `${prefix.replace(/\/+$/, '')}/${randomUUID()}/${name}`;
}

export interface SweepOptions {
  /** The folder swept (`artifacts/`); only keys starting with it are considered. */
  prefix: string;
  /** Objects younger than this many seconds are left alone, named or not. */
  graceSeconds: number;
  /** Of these keys, those that a row still names (one query per batch: `… WHERE key = ANY($1)`). */
  named: (keys: string[]) => Promise<Iterable<string>>;
  /** Keys asked about and removed at a time (default 500). */
  batchSize?: number;
  /** The sweep's clock (tests). */
  now?: Date;
}

export interface SweepResult {
  /** Objects listed under the prefix. */
  scanned: number;
  /** The keys removed. */
  removed: string[];
}

/** Removes the objects under `prefix`, older than the grace period, that no row names. */
export async function sweepOrphans(store: ObjectStore, options: SweepOptions): Promise<SweepResult> {
  const cutoff = (options.now ?? new Date()).getTime() - options.graceSeconds * 1000;
  const batchSize = options.batchSize ?? 500;
  const result: SweepResult = { scanned: 0, removed: [] };
  let batch: string[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const named = new Set(await options.named(batch));
    const orphans = batch.filter((key) => !named.has(key));
    await store.delete(orphans);
    result.removed.push(...orphans);
    batch = [];
  };
  for await (const object of store.list(options.prefix)) {
    result.scanned++;
    if (object.lastModified.getTime() > cutoff) continue;
    batch.push(object.key);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return result;
}
