/**
 * Zip archives through yauzl: their entries are read once, at upload, into an index; one file is later
 * streamed out of the stored archive by ranged reads of the object store (its local header, then its
 * bytes, inflated), without the central directory or the other files.
 */
import { PassThrough, type Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { ObjectStore } from '../core/object-store.js';

export interface IndexedEntry {
  path: string;
  headerOffset: number;
  compressedSize: number;
  size: number;
  compressionMethod: number;
  flags: number;
  crc32: number;
}

/** The files (not directories) of a zip on disk; rejects when it is no zip, or a name is unsafe. */
export async function readZipEntries(file: string): Promise<IndexedEntry[]> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true, decodeStrings: true, autoClose: true });
  const entries: IndexedEntry[] = [];
  return new Promise((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => resolve(entries));
    zip.on('entry', (entry: yauzl.Entry) => {
      if (!entry.fileName.endsWith('/'))
        entries.push({
          path: entry.fileName,
          headerOffset: entry.relativeOffsetOfLocalHeader,
          compressedSize: entry.compressedSize,
          size: entry.uncompressedSize,
          compressionMethod: entry.compressionMethod,
          flags: entry.generalPurposeBitFlag,
          crc32: entry.crc32,
        });
      zip.readEntry();
    });
    zip.readEntry();
  });
}

/** An object in the store as yauzl's random-access reader: each range is one ranged `get`. */
class ObjectReader extends yauzl.RandomAccessReader {
  constructor(
    private readonly store: ObjectStore,
    private readonly key: string,
  ) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const out = new PassThrough();
    // yauzl's end is exclusive, the store's inclusive.
    this.store.get(this.key, { start, end: end - 1 }).then(
      (stream) => {
        if (!stream) out.destroy(new Error(`object ${this.key} is gone`));
        else stream.on('error', (err) => out.destroy(err)).pipe(out);
      },
      (err: Error) => out.destroy(err),
    );
    return out;
  }
}

/** Whether yauzl can decode the entry (stored or deflated, not encrypted). */
export const canDecode = (entry: IndexedEntry) =>
  (entry.flags & 0x1) === 0 && (entry.compressionMethod === 0 || entry.compressionMethod === 8);

/** The entry's bytes, decompressed and checked for their length, read from the stored archive. */
export async function openStoredEntry(
  store: ObjectStore,
  key: string,
  archiveSize: number,
  indexed: IndexedEntry,
): Promise<Readable> {
  // The index stands in for the central directory: nothing before the entry is read.
  const zip = new yauzl.ZipFile(new ObjectReader(store, key), 0, archiveSize, 0, '', false, true, true, true);
  const entry = Object.assign(new yauzl.Entry(), {
    fileName: indexed.path,
    relativeOffsetOfLocalHeader: indexed.headerOffset,
    compressedSize: indexed.compressedSize,
    uncompressedSize: indexed.size,
    compressionMethod: indexed.compressionMethod,
    generalPurposeBitFlag: indexed.flags,
    crc32: indexed.crc32,
  });
  return zip.openReadStreamPromise(entry);
}
