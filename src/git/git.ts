/**
 * Running the git binary. Output is collected as bytes (never through a string decoder that would
 * corrupt binary content) or streamed from the child process by the caller.
 */
import fs from 'node:fs';
import path from 'node:path';
import { badParameter, notFound } from '../core/errors.js';
import { launch, type GitProcess } from './launcher.js';

export type { GitProcess };

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

/**
 * The repository git was pointed at is not on disk (any more): its project was deleted while the request
 * ran, so the answer is the project's 404. Not a GitError, so no caller takes it for git's refusal.
 */
export const repositoryGone = () => notFound('Project');

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

/** Linux's limit on one argument or environment string (MAX_ARG_STRLEN); beyond it spawn fails with E2BIG. */
const MAX_ARGUMENT_BYTES = 128 * 1024;
/** Arguments and environment share one budget (a quarter of the stack limit); stay well inside it. */
const MAX_ARGUMENTS_TOTAL = 1024 * 1024;

/**
 * Values that cannot become arguments or environment at all (an author name is an environment
 * variable). Callers validate what they pass; this is the backstop that turns a value they missed into
 * a 400 instead of a failed spawn.
 */
function assertArguments(args: string[], env: Record<string, string | undefined> = {}): void {
  const refuse = () => badParameter('400 Bad Request - a value is too long or holds a null byte');
  let total = 0;
  const check = (text: string) => {
    const bytes = Buffer.byteLength(text);
    if (text.includes('\0') || bytes >= MAX_ARGUMENT_BYTES) throw refuse();
    total += bytes + 1;
  };
  for (const arg of args) check(arg);
  for (const [name, value] of Object.entries(env)) if (value !== undefined) check(`${name}=${value}`);
  if (total >= MAX_ARGUMENTS_TOTAL) throw refuse();
}

/** The git binary, found once on PATH: no lookup per spawn. */
export const GIT_BINARY = findOnPath('git');

function findOnPath(command: string): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir || '.', command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return path.resolve(candidate);
    } catch {
      // not here
    }
  }
  return command;
}

/** Starts git through the launcher (launcher.ts): the server's event loop never waits for a fork. */
export function spawnGit(args: string[], options: GitOptions = {}): GitProcess {
  assertArguments(args, options.env);
  const fullArgs = options.gitDir ? [`--git-dir=${options.gitDir}`, ...args] : args;
  return launch(GIT_BINARY, fullArgs, gitEnv(options.env));
}

/**
 * Runs git to completion; a non-zero exit not in `okCodes` rejects with GitError, and any failure in a
 * repository that is no longer on disk with `repositoryGone()`.
 */
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
      if (result.code === 0) return resolve(result);
      const settle = () => {
        if (options.okCodes?.includes(result.code)) resolve(result);
        else reject(new GitError(args, result.code, result.stderr));
      };
      // Only a failure pays for the check; a deletion moves the repository away under a running request.
      if (options.gitDir) fs.access(options.gitDir, (gone) => (gone ? reject(repositoryGone()) : settle()));
      else settle();
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
