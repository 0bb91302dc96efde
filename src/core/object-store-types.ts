/**
 * The object store's interface and key rule, apart from the backends (src/core/object-store.ts re-exports
 * them; import them from there).
 */
import type { Readable } from 'node:stream';

export interface ObjectInfo {
  key: string;
  size: number;
  lastModified: Date;
}

export interface DownloadOptions {
  /** The file name a browser saves it as (`Content-Disposition`). */
  filename?: string;
  contentType?: string;
  /** Seconds the link stays valid. */
  expiresIn?: number;
}

export interface ObjectStore {
  /** Which backend it is, for logs and metrics. */
  readonly kind: 'file' | 's3';
  /** Stores a local file under `key` (the file is left in place); answers its size. */
  putFile(key: string, file: string): Promise<number>;
  /** Stores a stream under `key`; answers its size. A failed write leaves nothing under `key`. */
  putStream(key: string, body: Readable): Promise<number>;
  /**
   * The object's bytes (`start`..`end` inclusive when given, `end` clipped to the object's last byte, no
   * bytes when `start` is past it); 404-worthy absence is `null`.
   */
  get(key: string, range?: { start: number; end: number }): Promise<Readable | null>;
  head(key: string): Promise<ObjectInfo | null>;
  /** Removes objects; keys that are already gone are not an error. */
  delete(keys: readonly string[]): Promise<void>;
  /** A presigned URL to download directly from the bucket, or null when the server serves the bytes. */
  downloadUrl(key: string, options?: DownloadOptions): Promise<string | null>;
  /**
   * Stops the start with a clear message when the store cannot be used: a directory that cannot be
   * written, a bucket that does not exist, credentials it refuses, an endpoint that does not answer.
   */
  check(): Promise<void>;
  /**
   * Every object whose key starts with `prefix`, in no set order, for sweeps of objects no row names (on
   * files, also what a crash left half-written, which no row names either).
   */
  list(prefix: string): AsyncIterable<ObjectInfo>;
}

/**
 * Keys are relative paths of non-empty segments (`artifacts/12/archive.zip`), the same for both
 * backends: no leading `/`, no `.` or `..` segment, no backslash or control character.
 */
export function checkObjectKey(key: string): string {
  const bad =
    key.length === 0 ||
    key.length > 1024 ||
    /[\\\x00-\x1f\x7f]/.test(key) ||
    key.split('/').some((segment) => segment === '' || segment === '.' || segment === '..');
  if (bad) throw new Error(`bad object key ${JSON.stringify(key)}`);
  return key;
}
