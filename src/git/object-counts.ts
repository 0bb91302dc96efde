/**
 * What `git count-objects -v` reports, read from the object directory itself: it runs after every push
 * (project statistics, housekeeping), where a process would cost more than the reading.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { LruCache } from '../core/lru.js';

export interface ObjectCounts {
  /** Loose objects, and the bytes they take on disk. */
  loose: number;
  looseBytes: number;
  /** This repository's own packs (not an alternate's), and the bytes of their packs and indexes. */
  packs: number;
  packBytes: number;
}

const FAN_OUT = /^[0-9a-f]{2}$/;
const LOOSE_NAME = /^[0-9a-f]{38}([0-9a-f]{24})?$/;

/** Bytes on disk, as git counts them: allocated blocks where the file system reports them. */
async function diskBytes(file: string): Promise<number> {
  const stat = await fs.stat(file).catch(() => null);
  if (!stat) return 0; // removed meanwhile by a repack or prune
  return stat.blocks !== undefined && stat.blocks > 0 ? stat.blocks * 512 : stat.size;
}

interface FanOut {
  loose: number;
  bytes: number;
}

/**
 * Each fan-out directory's loose objects, by the directory's identity and modification time: objects are
 * never rewritten in place, so the directory changes whenever its count or bytes do. A directory
 * modified within the last second is read but not kept, as file times may not tell two changes in the
 * same clock tick apart (git's "racily clean" rule).
 */
const FAN_OUTS = new LruCache<string, FanOut>(8192);
const RACY_MS = 1_000;

async function fanOut(dir: string): Promise<FanOut> {
  const stat = await fs.stat(dir).catch(() => null);
  if (!stat) return { loose: 0, bytes: 0 };
  const key = `${dir}\0${stat.ino}\0${stat.mtimeMs}`;
  const known = FAN_OUTS.get(key);
  if (known) return known;
  const files = await fs.readdir(dir).catch(() => [] as string[]);
  const loose = files.filter((file) => LOOSE_NAME.test(file));
  const sizes = await Promise.all(loose.map((file) => diskBytes(path.join(dir, file))));
  const found = { loose: loose.length, bytes: sizes.reduce((sum, size) => sum + size, 0) };
  if (Date.now() - stat.mtimeMs > RACY_MS) FAN_OUTS.set(key, found);
  return found;
}

export async function countObjects(gitDir: string): Promise<ObjectCounts> {
  const objects = path.join(gitDir, 'objects');
  const counts: ObjectCounts = { loose: 0, looseBytes: 0, packs: 0, packBytes: 0 };
  const names = await fs.readdir(objects).catch(() => [] as string[]);
  const fanOuts = await Promise.all(
    names.filter((name) => FAN_OUT.test(name)).map((dir) => fanOut(path.join(objects, dir))),
  );
  for (const { loose, bytes } of fanOuts) {
    counts.loose += loose;
    counts.looseBytes += bytes;
  }
  const packDir = path.join(objects, 'pack');
  const packFiles = await fs.readdir(packDir).catch(() => [] as string[]);
  // git knows a pack by its index: one still being written has none yet.
  const present = new Set(packFiles);
  const packs = packFiles.filter((file) => file.endsWith('.pack') && present.has(`${file.slice(0, -5)}.idx`));
  counts.packs = packs.length;
  const sizes = await Promise.all(
    packs.map(async (pack) => {
      const [packSize, indexSize] = await Promise.all(
        [pack, `${pack.slice(0, -5)}.idx`].map((file) =>
          fs.stat(path.join(packDir, file)).then(
            (stat) => stat.size,
            () => 0,
          ),
        ),
      );
      return packSize + indexSize;
    }),
  );
  for (const size of sizes) counts.packBytes += size;
  return counts;
}

/** The repository's size as GitLab shows it: loose objects and packs, whole KiB as git rounds them. */
export async function repositorySize(gitDir: string): Promise<number> {
  const counts = await countObjects(gitDir);
  return (Math.floor(counts.looseBytes / 1024) + Math.floor(counts.packBytes / 1024)) * 1024;
}
