/**
 * The embedded default's start, as `make run` does it: the built server with no DATABASE_URL, twice on a
 * new data directory (the first fresh start of a checkout also makes the migrated template the others
 * copy) and then on the data the second left, each timed from spawn until readiness answers, with the
 * resident memory right after.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

export interface BootRow {
  start: string;
  readyMs: number;
  rssMb: number;
}

/** Resident memory of `pid` in MB, NaN without /proc. */
function rssMb(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
    return kb ? Number(kb) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

async function bootOnce(root: string, dataDir: string, port: number): Promise<Omit<BootRow, 'start'>> {
  const began = performance.now();
  const logFile = fs.openSync(path.join(dataDir, 'server.log'), 'a');
  const child = spawn(process.execPath, [path.join(root, 'dist/src/main.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
    },
    stdio: ['ignore', logFile, logFile],
  });
  fs.closeSync(logFile);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const deadline = began + 120_000;
    while (performance.now() < deadline && child.exitCode === null) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/-/readiness`)).ok)
          return { readyMs: performance.now() - began, rssMb: rssMb(child.pid!) };
      } catch {
        // not listening yet
      }
      await sleep(20);
    }
    throw new Error(`the embedded server did not become ready; see ${path.join(dataDir, 'server.log')}`);
  } finally {
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000)]);
  }
}

export async function measureEmbeddedBoot(root: string, port: number): Promise<BootRow[]> {
  const first = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-boot-'));
  const second = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-boot-'));
  try {
    return [
      { start: 'fresh (the first may make the template)', ...(await bootOnce(root, first, port)) },
      { start: 'fresh', ...(await bootOnce(root, second, port)) },
      { start: 'existing data', ...(await bootOnce(root, second, port)) },
    ];
  } finally {
    for (const dir of [first, second]) fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function bootTable(rows: BootRow[]): string {
  const width = Math.max(...rows.map((row) => row.start.length), 'embedded start'.length);
  return [
    `${'embedded start'.padEnd(width)}  ready s  RSS MB`,
    `${'-'.repeat(width)}  -------  ------`,
    ...rows.map(
      (row) =>
        `${row.start.padEnd(width)}  ${(row.readyMs / 1000).toFixed(2).padStart(7)}  ${row.rssMb.toFixed(0).padStart(6)}`,
    ),
  ].join('\n');
}
