/**
 * Child processes of a job: each runs in a process group of its own (detached), so that a cancel, a
 * timeout or the job's end reaches everything the script started with one negative-pid kill.
 */
import { spawn } from 'node:child_process';

export interface JobUser {
  uid: number;
  gid: number;
  home?: string;
  name: string;
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  user?: JobUser;
  /** Output of both streams, as it comes. */
  onOutput: (chunk: Buffer) => void;
}

export interface RunningProcess {
  /** The exit code, or 128 + the signal's number when a signal ended it. */
  done: Promise<number>;
  /** Ends the whole group: SIGTERM, then SIGKILL after `graceMs`. */
  kill(graceMs?: number): void;
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

export function runProcess(command: string, args: string[], options: RunOptions): RunningProcess {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
  });
  child.stdout.on('data', options.onOutput);
  child.stderr.on('data', options.onOutput);
  let exited = false;
  const done = new Promise<number>((resolve) => {
    let code = 0;
    child.on('error', (err) => {
      options.onOutput(Buffer.from(`${err.message}\n`));
      code = 127;
      exited = true;
      resolve(code);
    });
    child.on('exit', (exitCode, signal) => {
      exited = true;
      code = exitCode ?? 128 + (SIGNALS[signal ?? ''] ?? 1);
      // What the script left running in its group ends with it (and lets the pipes close).
      if (child.pid) killGroup(child.pid, 'SIGKILL');
    });
    child.on('close', () => resolve(code));
  });
  return {
    done,
    kill(graceMs = 2000) {
      const pid = child.pid;
      if (!pid) return;
      killGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
      timer.unref();
      void done.then(() => clearTimeout(timer));
      if (exited) killGroup(pid, 'SIGKILL');
    },
  };
}
