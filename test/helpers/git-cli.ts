/** Plain `git` as a client runs it, for tests that clone from and push to the server. */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';

const exec = promisify(execFile);

export interface GitCliResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** The clone URL of the project at `fullPath`, with `token` as the Basic password when given. */
export function remoteUrl(serverUrl: string, fullPath: string, token?: string): string {
  const url = new URL(`${serverUrl}/${fullPath}.git`);
  if (token) {
    url.username = 'anyone';
    url.password = token;
  }
  return url.toString();
}

/**
 * A scratch directory for this test file (removed afterwards) and a git runner that never prompts and
 * ignores the machine's configuration.
 */
export function useGitWorkDir(prefix = 'forge-git-') {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  async function gitCli(args: string[], cwd = work): Promise<GitCliResult> {
    try {
      const { stdout, stderr } = await exec(
        'git',
        ['-c', 'user.name=Tester', '-c', 'user.email=t@example.com', ...args],
        {
          cwd,
          env: { PATH: process.env.PATH, HOME: work, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' },
        },
      );
      return { ok: true, stdout, stderr };
    } catch (err) {
      const failure = err as { stdout: string; stderr: string };
      return { ok: false, stdout: failure.stdout, stderr: failure.stderr };
    }
  }

  return { work, gitCli };
}
