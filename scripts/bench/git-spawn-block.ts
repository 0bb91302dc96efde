/**
 * How long starting one git process holds the event loop of a process of a given size:
 * `node --import tsx scripts/bench/git-spawn-block.ts [MB of Buffers to hold] [processes]`.
 * It fills that much memory (so the process's RSS is large, as a busy server's is), then starts
 * `git --version` one at a time and four at a time, through spawnGit and, for comparison, through
 * node's own spawn as spawnGit did before the launcher, timing the synchronous part of each start and
 * watching the loop's delay with a 1 ms timer.
 */
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { GIT_BINARY, gitEnv, spawnGit, type GitProcess } from '../../src/git/git.js';
import { percentile } from './driver.js';

const megabytes = Number(process.argv[2] ?? 600);
const count = Number(process.argv[3] ?? 200);

const ballast: Buffer[] = [];
for (let i = 0; i < megabytes; i++) ballast.push(Buffer.alloc(2 ** 20, i));

const starters: Record<string, () => GitProcess> = {
  'node spawn': () => spawn(GIT_BINARY, ['--version'], { env: gitEnv(), stdio: 'pipe' }),
  spawnGit: () => spawnGit(['--version']),
};

function run(start: () => GitProcess): Promise<number> {
  const began = performance.now();
  const child = start();
  const held = performance.now() - began;
  child.stdout!.resume();
  child.stderr!.resume();
  child.stdin!.end();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(held) : reject(new Error(`git exited ${code}`))));
  });
}

async function measure(name: string, parallel: number) {
  const start = starters[name];
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const held: number[] = [];
  const began = performance.now();
  delay.enable();
  for (let i = 0; i < count; i += parallel)
    held.push(
      ...(await Promise.all(Array.from({ length: Math.min(parallel, count - i) }, () => run(start)))),
    );
  delay.disable();
  const wall = performance.now() - began;
  held.sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(2);
  process.stdout.write(
    `${name.padEnd(10)} ${parallel} at a time: start holds the loop p50 ${f(percentile(held, 50))} ms, ` +
      `p99 ${f(percentile(held, 99))} ms, mean ${f(held.reduce((a, b) => a + b, 0) / held.length)} ms; ` +
      `loop delay p99 ${f(delay.percentile(99) / 1e6)} ms, max ${f(delay.max / 1e6)} ms; ` +
      `${f(wall / count)} ms of wall time per process\n`,
  );
}

// The first start may set things up (a launcher): not what is measured.
for (const start of Object.values(starters)) await run(start);
process.stdout.write(
  `${count} × git --version at ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB RSS ` +
    `(${megabytes} MB held)\n`,
);
for (const name of Object.keys(starters)) for (const parallel of [1, 4]) await measure(name, parallel);
void ballast;
process.exit(0);
