/** What a process costs, read from /proc: CPU time (its own and its descendants') and spawns. */
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

interface Stat {
  ppid: number;
  /** The executable's name, as /proc gives it (`git`, `node`). */
  name: string;
  /** utime + stime: the process's own CPU, in ticks. */
  own: number;
  /** cutime + cstime: the CPU of the children it has waited for. */
  reaped: number;
}

function readStat(pid: string): Stat | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    // ppid is field 4 of stat and utime..cstime fields 14-17; here 0-based after pid and comm: 1, 11-14.
    return {
      ppid: Number(fields[1]),
      name: stat.slice(stat.indexOf('(') + 1, close),
      own: Number(fields[11]) + Number(fields[12]),
      reaped: Number(fields[13]) + Number(fields[14]),
    };
  } catch {
    return undefined;
  }
}

/** `pid` and every live process below it, from one pass over /proc; empty without /proc. */
function processTree(pid: number): Array<Stat & { pid: number }> {
  const stats = new Map<number, Stat>();
  try {
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const stat = readStat(name);
      if (stat) stats.set(Number(name), stat);
    }
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const [child, { ppid }] of stats) children.set(ppid, [...(children.get(ppid) ?? []), child]);
  const tree: Array<Stat & { pid: number }> = [];
  const todo = stats.has(pid) ? [pid] : [];
  while (todo.length > 0) {
    const next = todo.pop()!;
    tree.push({ pid: next, ...stats.get(next)! });
    todo.push(...(children.get(next) ?? []));
  }
  return tree;
}

const ms = (ticks: number) => (ticks * 1000) / ticksPerSecond;

/**
 * CPU milliseconds of `pid` and every live process below it so far: user and system time of each, and
 * of the children each has waited for. A git process lands in its parent's count when it is reaped, but
 * a long-lived one (the object reader, a launcher that starts git for the server) is only counted here
 * while it runs: summing the whole tree counts git's work whoever started it. NaN without /proc.
 */
export function cpuMs(pid: number): number {
  const tree = processTree(pid);
  if (tree.length === 0) return NaN;
  return ms(tree.reduce((ticks, p) => ticks + p.own + p.reaped, 0));
}

/**
 * The same CPU by where it went: `server` (the process itself), each kind of long-lived process below
 * it by name (`git` for the object readers, `node` for a launcher), and `exited` (processes that ran
 * and were waited for: the git commands of requests).
 */
export function cpuByProcess(pid: number): Record<string, number> {
  const split: Record<string, number> = {};
  for (const p of processTree(pid)) {
    const name = p.pid === pid ? 'server' : p.name;
    split[name] = (split[name] ?? 0) + ms(p.own);
    split.exited = (split.exited ?? 0) + ms(p.reaped);
  }
  return split;
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
