/**
 * What starting git processes costs the server's event loop during `commit create`: read from what
 * git-spawn-probe.mjs (preloaded into the server) wrote at the signal that ended the measurement; and
 * the commit's floor, git's plumbing alone.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { gitEnv } from '../../src/git/git.js';
import { percentile } from './driver.js';

export const PROBE_FILE = 'git-probe.json';

export interface GitSpawnProbe {
  seconds: number;
  /** spawnGit calls, and the milliseconds their synchronous part held the loop. */
  starts: number;
  startMs: number;
  startMaxMs: number;
  /** node child_process spawns (fork + exec from the server's own heap). */
  forks: number;
  forkMs: number;
  forkMaxMs: number;
  loopDelay: { maxMs: number; p99Ms: number; meanMs: number; samples: number };
  rssMb: number;
}

/** The probe's report written next to the spawn count (same directory, same SIGUSR2). */
export async function readGitProbe(spawnFile: string): Promise<GitSpawnProbe | undefined> {
  const file = path.join(path.dirname(spawnFile), PROBE_FILE);
  for (let i = 0; i < 100; i++) {
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8')) as GitSpawnProbe;
    } catch {
      await sleep(10);
    }
  }
  return undefined;
}

/** Per git process: the largest of the two timings is what one start blocks the loop for. */
export function gitProbeLine(probe: GitSpawnProbe): string {
  const processes = Math.max(probe.starts, probe.forks);
  const blocked = Math.max(probe.startMs, probe.forkMs) / Math.max(processes, 1);
  const worst = Math.max(probe.startMaxMs, probe.forkMaxMs);
  const f = (n: number) => n.toFixed(2);
  return (
    `  event loop held ${f(blocked)} ms per git process started (worst ${f(worst)} ms; ` +
    `${processes} started, ${probe.forks} node spawns, at ${probe.rssMb.toFixed(0)} MB RSS); ` +
    `loop delay p99 ${f(probe.loopDelay.p99Ms)} ms, max ${f(probe.loopDelay.maxMs)} ms`
  );
}

export interface CommitFloor {
  command: string;
  p50: number;
}

/** One git process from this (small) benchmark process; `input` to its stdin. */
function runGit(gitDir: string, args: string[], input?: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const identity = { GIT_AUTHOR_NAME: 'Floor', GIT_AUTHOR_EMAIL: 'floor@example.com' };
    const env = gitEnv({
      ...identity,
      GIT_COMMITTER_NAME: 'Floor',
      GIT_COMMITTER_EMAIL: 'floor@example.com',
    });
    const child = spawn('git', [`--git-dir=${gitDir}`, ...args], { env });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(out).toString('latin1'))
        : reject(new Error(`git ${args[0]}: ${code}`)),
    );
    child.stdin.end(input);
  });
}

/** `ls-tree -z` records with the entry `name` pointing at `id` instead. */
const withEntry = (listing: string, name: string, id: string) =>
  listing
    .split('\0')
    .filter(Boolean)
    .map((record) => {
      const [info, entryName] = record.split('\t');
      const [mode, type] = info.split(' ');
      return `${mode} ${type} ${entryName === name ? id : info.split(' ')[2]}\t${entryName}\0`;
    })
    .join('');

/**
 * The floor of `commit create`: the same one-file commit made with git's plumbing from this process,
 * one after another, on a branch of its own: the blob (hash-object), the three trees on its path (one
 * mktree each), the commit (commit-tree) and the branch (update-ref). Five processes, no server.
 */
export async function commitFloor(gitDir: string, file: string, count: number): Promise<CommitFloor> {
  const [directory, name] = [path.dirname(file), path.basename(file)];
  const parents = directory.split('/');
  let parent = (await runGit(gitDir, ['rev-parse', 'main'])).trim();
  const listings = await Promise.all(
    ['', ...parents.map((_, i) => parents.slice(0, i + 1).join('/'))].map((dir) =>
      runGit(gitDir, ['ls-tree', '-z', `main:${dir}`]),
    ),
  );
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    let id = (await runGit(gitDir, ['hash-object', '-w', '--stdin'], `export const floor = ${i};\n`)).trim();
    for (let depth = listings.length - 1; depth >= 0; depth--) {
      const entry = depth === listings.length - 1 ? name : parents[depth];
      id = (await runGit(gitDir, ['mktree', '-z'], withEntry(listings[depth], entry, id))).trim();
    }
    const commit = (await runGit(gitDir, ['commit-tree', id, '-p', parent, '-m', `floor ${i}`])).trim();
    await runGit(gitDir, ['update-ref', 'refs/heads/bench/floor', commit]);
    parent = commit;
    latencies.push(performance.now() - start);
  }
  latencies.sort((a, b) => a - b);
  return {
    command: `git hash-object, mktree ×${listings.length}, commit-tree, update-ref, one after another`,
    p50: percentile(latencies, 50),
  };
}
