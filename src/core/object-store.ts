/**
 * One storage interface for what jobs and packages upload (artifacts, finished traces, later registry
 * blobs and packages): the file system under DATA_DIR by default, or an S3-compatible bucket that several
 * API nodes share (FORGE_OBJECT_STORE=s3). Keys are relative paths (`artifacts/12/34/archive.zip`).
 *
 * An object is written whole before a row names it, and removed when the row's transaction fails, so a
 * crash between the two leaves at most an object no row names: `storeThenCommit` and `sweepOrphans`
 * (object-store-lifecycle.ts) are the two halves of that rule for families.
 */
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ObjectStoreConfig } from './object-store-config.js';
import { S3ObjectStore } from './object-store-s3.js';
import { checkObjectKey, type ObjectInfo, type ObjectStore } from './object-store-types.js';

export type { ObjectStoreConfig } from './object-store-config.js';
export {
  checkObjectKey,
  type DownloadOptions,
  type ObjectInfo,
  type ObjectStore,
} from './object-store-types.js';

/** Reads and writes in chunks of 1 MiB rather than 64 KiB: a sixteenth of the system calls. */
const CHUNK = 1024 * 1024;

/** Objects as files under a directory; a write goes to a temporary name first, then is renamed. */
export class FileObjectStore implements ObjectStore {
  readonly kind = 'file' as const;

  constructor(private readonly root: string) {}

  private file(key: string): string {
    const resolved = path.resolve(this.root, checkObjectKey(key));
    if (!resolved.startsWith(path.resolve(this.root) + path.sep)) throw new Error(`bad object key ${key}`);
    return resolved;
  }

  /** A copy as `cp` makes it (copy_file_range, or a reflink where the file system has them). */
  async putFile(key: string, file: string): Promise<number> {
    const target = this.file(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const partial = this.partial(target);
    try {
      await fs.copyFile(file, partial);
      await fs.rename(partial, target);
    } catch (err) {
      await fs.rm(partial, { force: true });
      throw err;
    }
    return (await fs.stat(target)).size;
  }

  private partial(target: string): string {
    return `${target}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}.partial`;
  }

  async putStream(key: string, body: Readable): Promise<number> {
    const target = this.file(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const partial = this.partial(target);
    try {
      await pipeline(body, createWriteStream(partial, { highWaterMark: CHUNK }));
      await fs.rename(partial, target);
    } catch (err) {
      await fs.rm(partial, { force: true });
      throw err;
    }
    return (await fs.stat(target)).size;
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Readable | null> {
    const file = this.file(key);
    const handle = await fs.open(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (!handle) return null;
    return handle.createReadStream({
      highWaterMark: CHUNK,
      ...(range ? { start: range.start, end: range.end } : {}),
    });
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const stat = await fs.stat(this.file(key)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    return stat?.isFile() ? { key, size: stat.size, lastModified: stat.mtime } : null;
  }

  async delete(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => fs.rm(this.file(key), { force: true })));
  }

  async downloadUrl(): Promise<string | null> {
    return null;
  }

  async check(): Promise<void> {
    try {
      await fs.mkdir(this.root, { recursive: true });
      await fs.access(this.root, fs.constants.W_OK);
    } catch (err) {
      throw new Error(
        `the object store's directory ${this.root} cannot be written: ${(err as Error).message}`,
      );
    }
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    // The folder the prefix names or ends in, then only the keys that start with the prefix, as S3 lists.
    const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const base = folder ? this.file(folder) : path.resolve(this.root);
    const entries = await fs.readdir(base, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      // What an interrupted write left (`*.partial`, only after a crash) is listed too: no row names it,
      // so the sweep of orphans removes it once it is older than the grace period.
      if (!entry.isFile()) continue;
      const full = path.join(entry.parentPath, entry.name);
      const key = path.relative(this.root, full).split(path.sep).join('/');
      if (!key.startsWith(prefix)) continue;
      const stat = await fs.stat(full).catch(() => null);
      if (stat) yield { key, size: stat.size, lastModified: stat.mtime };
    }
  }
}

export function createObjectStore(config: ObjectStoreConfig): ObjectStore {
  return config.kind === 's3' ? new S3ObjectStore(config) : new FileObjectStore(config.dir);
}

/** A readable of a whole buffer, for small objects. */
export const bufferStream = (buffer: Buffer): Readable => Readable.from([buffer]);
