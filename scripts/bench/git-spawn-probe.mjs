/**
 * Preloaded into the server by `make bench` beside spawn-counter.mjs: how long starting a git process
 * holds the server's event loop. It times the synchronous part of each start (node's
 * ChildProcess.prototype.spawn, and each start as a whole through the `forge:process:launch` tracing
 * channel of src/git/launcher.ts)
 * and watches the loop's delay. On SIGUSR2 it writes what it saw since the last signal to
 * BENCH_GIT_PROBE_FILE as JSON and starts again.
 */
import diagnostics from 'node:diagnostics_channel';
import fs from 'node:fs';
import { ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

const file = process.env.BENCH_GIT_PROBE_FILE;
if (file) {
  const fresh = () => ({ starts: 0, startMs: 0, startMaxMs: 0, forks: 0, forkMs: 0, forkMaxMs: 0 });
  let seen = fresh();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let since = performance.now();

  const original = ChildProcess.prototype.spawn;
  ChildProcess.prototype.spawn = function timedSpawn(...args) {
    const started = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      const ms = performance.now() - started;
      seen.forks++;
      seen.forkMs += ms;
      seen.forkMaxMs = Math.max(seen.forkMaxMs, ms);
    }
  };

  // launch() publishes here; a server without the channel counts through the fork timing alone.
  const starts = new WeakMap();
  diagnostics.tracingChannel('forge:process:launch').subscribe({
    start: (context) => starts.set(context, performance.now()),
    end: (context) => {
      const ms = performance.now() - (starts.get(context) ?? performance.now());
      seen.starts++;
      seen.startMs += ms;
      seen.startMaxMs = Math.max(seen.startMaxMs, ms);
    },
    asyncStart: () => {},
    asyncEnd: () => {},
    error: () => {},
  });

  // First, so the report is on disk before spawn-counter's count, which the benchmark waits for.
  process.prependListener('SIGUSR2', () => {
    const report = {
      seconds: (performance.now() - since) / 1000,
      ...seen,
      loopDelay: {
        // Delays past the 1 ms timer's own period, in ms.
        maxMs: delay.max / 1e6,
        p99Ms: delay.percentile(99) / 1e6,
        meanMs: delay.mean / 1e6,
        samples: delay.count,
      },
      rssMb: process.memoryUsage().rss / 2 ** 20,
    };
    fs.writeFileSync(file, JSON.stringify(report));
    seen = fresh();
    delay.reset();
    since = performance.now();
  });
}
