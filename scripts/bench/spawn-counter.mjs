/**
 * Preloaded into the server by `make bench` only (`node --import`): counts the child processes the
 * server starts, so the benchmark can print spawns per request. Every spawn, execFile and exec of
 * node goes through ChildProcess.prototype.spawn. The count is written to BENCH_SPAWN_FILE on SIGUSR2.
 */
import fs from 'node:fs';
import { ChildProcess } from 'node:child_process';

const file = process.env.BENCH_SPAWN_FILE;
if (file) {
  let count = 0;
  const original = ChildProcess.prototype.spawn;
  ChildProcess.prototype.spawn = function countedSpawn(...args) {
    count++;
    return original.apply(this, args);
  };
  process.on('SIGUSR2', () => fs.writeFileSync(file, String(count)));
}
