/**
 * Preloaded into the server by `make bench` only (`node --import`): counts the child processes the
 * server starts, so the benchmark can print spawns per request. Every spawn, execFile and exec of
 * node goes through ChildProcess.prototype.spawn; git processes started by the launcher (src/git/
 * launcher.ts) are counted through its tracing channel. The count is written to BENCH_SPAWN_FILE on
 * SIGUSR2.
 */
import diagnostics from 'node:diagnostics_channel';
import fs from 'node:fs';
import { ChildProcess } from 'node:child_process';

const file = process.env.BENCH_SPAWN_FILE;
if (file) {
  let count = 0;
  const original = ChildProcess.prototype.spawn;
  // BENCH_SPAWN_LOG: also the command line and run time of each, to see where a request's processes go.
  const logFile = process.env.BENCH_SPAWN_LOG;
  // A launch that falls back to a direct spawn is counted once, as the launch.
  let launching = 0;
  diagnostics.tracingChannel('forge:process:launch').subscribe({
    start: () => {
      count++;
      launching++;
    },
    end: () => launching--,
    asyncStart: () => {},
    asyncEnd: () => {},
    error: () => {},
  });
  ChildProcess.prototype.spawn = function countedSpawn(...args) {
    if (launching === 0) count++;
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
