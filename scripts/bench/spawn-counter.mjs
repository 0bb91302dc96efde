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
  // BENCH_SPAWN_LOG: also the command line and run time of each, to see where a request's processes go.
  const logFile = process.env.BENCH_SPAWN_LOG;
  ChildProcess.prototype.spawn = function countedSpawn(...args) {
    count++;
    const result = original.apply(this, args);
    if (logFile) {
      const started = performance.now();
      const command = (args[0]?.args ?? []).slice(1).join(' ').slice(0, 200);
      this.once('exit', () =>
        fs.appendFileSync(logFile, `${(performance.now() - started).toFixed(1)} ms\t${command}\n`),
      );
    }
    return result;
  };
  process.on('SIGUSR2', () => fs.writeFileSync(file, String(count)));
}
