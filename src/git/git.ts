/**
 * Running the git binary. Output is collected as bytes (never through a string decoder that would
 * corrupt binary content) or streamed from the child process by the caller.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

export interface GitOptions {
  /** The repository (`--git-dir`); commands that need none leave it out. */
  gitDir?: string;
  input?: string | Buffer;
  env?: Record<string, string>;
  /** Exit codes that are answers rather than failures (`merge-base --is-ancestor` gives 1). */
  okCodes?: number[];
}

export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly code: number,
    readonly stderr: string,
  ) {
    super(`git ${args[0]} failed (${code}): ${stderr.trim().split('\n')[0] ?? ''}`);
  }
}

/** A git environment that ignores the user's and the system's configuration. */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
    ...extra,
  };
}

export function spawnGit(args: string[], options: GitOptions & SpawnOptions = {}): ChildProcess {
  const fullArgs = options.gitDir ? [`--git-dir=${options.gitDir}`, ...args] : args;
  return spawn('git', fullArgs, { env: gitEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Runs git to completion; a non-zero exit not in `okCodes` rejects with GitError. */
export function git(args: string[], options: GitOptions = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(args, options);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const result = {
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err).toString('utf8'),
        code: code ?? -1,
      };
      if (result.code === 0 || options.okCodes?.includes(result.code)) resolve(result);
      else reject(new GitError(args, result.code, result.stderr));
    });
    child.stdin!.on('error', () => {
      // git may exit before reading all input; its exit code tells what happened.
    });
    child.stdin!.end(options.input);
  });
}

/** Trimmed text output, for commands that print names and ids. */
export async function gitText(args: string[], options: GitOptions = {}): Promise<string> {
  return (await git(args, options)).stdout.toString('utf8').trim();
}
