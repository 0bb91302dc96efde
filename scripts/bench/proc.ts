/** What a process costs, read from /proc: CPU time (its own and its reaped children's) and spawns. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const ticksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU milliseconds of `pid` so far: user and system time of the process and of the children it has
 * waited for (the git processes a server spawns land there when they exit). NaN without /proc.
 */
export function cpuMs(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime are fields 14-17 of stat; here 0-based after pid and comm: 11-14.
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    return (ticks * 1000) / ticksPerSecond;
  } catch {
    return NaN;
  }
}

/**
 * Child processes started so far by a server run with spawn-counter.cjs preloaded: it writes its
 * count to `file` on SIGUSR2. NaN when it does not answer.
 */
export async function spawnCount(pid: number, file: string): Promise<number> {
  fs.rmSync(file, { force: true });
  try {
    process.kill(pid, 'SIGUSR2');
  } catch {
    return NaN;
  }
  for (let i = 0; i < 200; i++) {
    try {
      const text = fs.readFileSync(file, 'utf8');
      if (text) return Number(text);
    } catch {
      // not written yet
    }
    await sleep(5);
  }
  return NaN;
}
