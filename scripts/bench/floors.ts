/**
 * Git floors: the git command that answers an endpoint's question, on the server's own repository.
 * p50 is the wall time of one invocation, run one after another from this (small) process (up to
 * `invocations` or `serialMs`, at least three). Throughput
 * and CPU come from `connections` bash loops running the command back to back for `seconds`; bash's
 * `times` reports the CPU of the git processes it waited for. A cold floor (gitFloorEach) runs a
 * different command for each invocation, as its cold endpoint asks about a different object each time.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gitEnv } from '../../src/git/git.js';
import { summarize } from './driver.js';

function run(command: string, args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: gitEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString('utf8') }));
  });
}

export interface GitFloor {
  command: string;
  p50: number;
  /** Invocations per second with `connections` loops. */
  throughput: number;
  /** CPU milliseconds per invocation (user + system of git). */
  cpuMs: number;
}

/** `times` prints "0m1.234s 0m0.567s": the children's user and system time on its second line. */
export function parseTimes(output: string): number {
  const line = output.trim().split('\n').at(-1) ?? '';
  const parts = [...line.matchAll(/(\d+)m([\d.]+)s/g)];
  return parts.reduce((ms, m) => ms + (Number(m[1]) * 60 + Number(m[2])) * 1000, 0);
}

const LOOP = `
end=$(( \${EPOCHREALTIME/./} + $1 * 1000000 )); shift; n=0
while [ \${EPOCHREALTIME/./} -lt $end ]; do git "$@" >/dev/null 2>&1 || exit 3; n=$((n+1)); done
echo $n; times`;

/** As LOOP, with the arguments of each invocation from the next line of a file (tab-separated). */
const EACH_LOOP = `
end=$(( \${EPOCHREALTIME/./} + $1 * 1000000 )); mapfile -t lines < "$2"; i=$3; shift 3; n=0
while [ \${EPOCHREALTIME/./} -lt $end ]; do
  IFS=$'\\t' read -r -a each <<< "\${lines[i % \${#lines[@]}]}"
  git "$@" "\${each[@]}" >/dev/null 2>&1 || exit 3; n=$((n+1)); i=$((i+1))
done
echo $n; times`;

export async function gitFloor(
  gitDir: string,
  args: string[],
  options: { invocations: number; serialMs: number; connections: number; seconds: number },
): Promise<GitFloor> {
  const full = [`--git-dir=${gitDir}`, ...args];
  const first = await run('git', full);
  if (first.code !== 0) throw new Error(`floor command failed: git ${args.join(' ')}`);
  const latencies: number[] = [];
  const serialEnd = performance.now() + options.serialMs;
  for (let i = 0; i < options.invocations && (i < 3 || performance.now() < serialEnd); i++) {
    const start = performance.now();
    await run('git', full);
    latencies.push(performance.now() - start);
  }
  const start = performance.now();
  const loops = await Promise.all(
    Array.from({ length: options.connections }, () =>
      run('bash', ['-c', LOOP, 'bash', String(options.seconds), ...full]),
    ),
  );
  const elapsed = (performance.now() - start) / 1000;
  let count = 0;
  let cpu = 0;
  for (const loop of loops) {
    if (loop.code !== 0) throw new Error(`floor loop failed: git ${args.join(' ')}`);
    const [n, ...rest] = loop.stdout.trim().split('\n');
    count += Number(n);
    cpu += parseTimes(rest.join('\n'));
  }
  return {
    command: `git ${args.join(' ')}`,
    p50: summarize(latencies).p50,
    throughput: count / elapsed,
    cpuMs: count ? cpu / count : NaN,
  };
}

/**
 * A cold floor: as gitFloor, with `argsList[i]` for the i-th invocation (each loop starting at its own
 * place in the list), so that every invocation asks about another object.
 */
export async function gitFloorEach(
  gitDir: string,
  argsList: string[][],
  command: string,
  options: { invocations: number; serialMs: number; connections: number; seconds: number },
): Promise<GitFloor> {
  const dir = `--git-dir=${gitDir}`;
  const latencies: number[] = [];
  const serialEnd = performance.now() + options.serialMs;
  for (let i = 0; i < options.invocations && (i < 3 || performance.now() < serialEnd); i++) {
    const start = performance.now();
    const { code } = await run('git', [dir, ...argsList[i % argsList.length]]);
    if (code !== 0) throw new Error(`floor command failed: git ${argsList[i].join(' ')}`);
    latencies.push(performance.now() - start);
  }
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'forge-floor-')), 'args');
  fs.writeFileSync(file, `${argsList.map((args) => args.join('\t')).join('\n')}\n`);
  const spread = Math.floor(argsList.length / options.connections);
  const start = performance.now();
  const loops = await Promise.all(
    Array.from({ length: options.connections }, (_, c) =>
      run('bash', ['-c', EACH_LOOP, 'bash', String(options.seconds), file, String(c * spread), dir]),
    ),
  );
  const elapsed = (performance.now() - start) / 1000;
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  let count = 0;
  let cpu = 0;
  for (const loop of loops) {
    if (loop.code !== 0) throw new Error(`floor loop failed: ${command}`);
    const [n, ...rest] = loop.stdout.trim().split('\n');
    count += Number(n);
    cpu += parseTimes(rest.join('\n'));
  }
  return {
    command,
    p50: summarize(latencies).p50,
    throughput: count / elapsed,
    cpuMs: count ? cpu / count : NaN,
  };
}
