/**
 * Object storage throughput: a 200 MB file put into and read back out of FileObjectStore, beside its floor
 * in the same run, a plain `cp` of the same file on the same disk (the goal: at least 50% of it);
 * then the same through the S3 backend against a local s3rver, for information only (s3rver writes each
 * object twice, parts then the whole, and is no measure of a real bucket).
 *
 * `get` writes the bytes to a file on the same disk, as `cp` does; every figure is the median of the runs,
 * with the page cache warm (no run drops it). A benchmark, not a test: it prints numbers and never fails
 * on one. Env: OBJECT_BENCH_MB (200), OBJECT_BENCH_RUNS (5), OBJECT_BENCH_S3=0 skips s3rver.
 * Run: node --import tsx scripts/bench/object-store.ts
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { FileObjectStore, type ObjectStore } from '../../src/core/object-store.js';
import { S3ObjectStore } from '../../src/core/object-store-s3.js';
import { startS3Server } from '../../test/helpers/s3-server.js';

const SIZE_MB = Number(process.env.OBJECT_BENCH_MB ?? 200);
const RUNS = Number(process.env.OBJECT_BENCH_RUNS ?? 5);
const WITH_S3 = process.env.OBJECT_BENCH_S3 !== '0';
const print = (line: string) => process.stdout.write(`${line}\n`);

// The repository's disk, where DATA_DIR is by default.
const work = fs.mkdtempSync(path.join(path.resolve('.forge-test'), 'bench-objects-'));
fs.mkdirSync(work, { recursive: true });
const source = path.join(work, 'source.bin');
const copy = path.join(work, 'copy.bin');
const out = path.join(work, 'out.bin');

function makeSource(): void {
  const fd = fs.openSync(source, 'w');
  const block = crypto.randomBytes(1024 * 1024);
  for (let i = 0; i < SIZE_MB; i++) {
    block.writeUInt32LE(i, 0);
    fs.writeSync(fd, block);
  }
  fs.closeSync(fd);
}

async function median(run: () => Promise<void>, before?: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    await before?.();
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

interface Row {
  name: string;
  ms: number;
}

async function measureStore(store: ObjectStore, label: string): Promise<Row[]> {
  const key = 'bench/archive.bin';
  // Each put makes a new object, as uploads do (keys are fresh), rather than replacing one.
  const fresh = () => store.delete([key]);
  const put = await median(async () => {
    await store.putFile(key, source);
  }, fresh);
  // As an upload arrives: a stream, not a file the store may copy whole.
  const putStream = await median(async () => {
    await store.putStream(key, createReadStream(source, { highWaterMark: 1024 * 1024 }));
  }, fresh);
  const get = await median(
    async () => {
      const body = await store.get(key);
      if (!body) throw new Error(`${label}: the object is missing`);
      await pipeline(body, createWriteStream(out));
    },
    () => fs.rmSync(out, { force: true }),
  );
  if ((await store.head(key))?.size !== SIZE_MB * 1024 * 1024) throw new Error(`${label}: wrong size`);
  await store.delete([key]);
  return [
    { name: `${label} putFile`, ms: put },
    { name: `${label} putStream`, ms: putStream },
    { name: `${label} get`, ms: get },
  ];
}

try {
  makeSource();
  const cp = await median(
    async () => {
      execFileSync('cp', [source, copy]);
    },
    () => fs.rmSync(copy, { force: true }),
  );
  const rows: Row[] = [{ name: 'cp (floor)', ms: cp }];
  rows.push(...(await measureStore(new FileObjectStore(path.join(work, 'objects')), 'file')));
  if (WITH_S3) {
    const server = await startS3Server('bench');
    const store = new S3ObjectStore(server.config({ partSizeBytes: 8 * 1024 * 1024 }));
    try {
      rows.push(...(await measureStore(store, 's3rver')));
    } finally {
      await store.close();
      await server.stop();
    }
  }
  print(`object storage: ${SIZE_MB} MB, median of ${RUNS} runs, page cache warm (goal: file ≥ 50% of cp)`);
  print(`  ${'operation'.padEnd(17)} ${'ms'.padStart(8)} ${'MB/s'.padStart(8)} ${'of cp'.padStart(7)}`);
  for (const row of rows) {
    const rate = SIZE_MB / (row.ms / 1000);
    const share = `${Math.round((cp / row.ms) * 100)}%`;
    print(
      `  ${row.name.padEnd(17)} ${row.ms.toFixed(0).padStart(8)} ${rate.toFixed(0).padStart(8)} ${share.padStart(7)}`,
    );
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
