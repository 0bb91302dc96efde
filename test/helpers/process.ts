import { spawn, type ChildProcess } from 'node:child_process';

/** The built entry point, as `make run` starts it (`make test` builds first). */
export const SERVER_ENTRY = 'dist/src/main.js';

/**
 * Starts the built server as its own process. `ready` resolves with its output once it says it is
 * listening, and rejects if it exits first or does not start within 60 s. `detached` makes it lead a
 * process group of its own, which `process.kill(-child.pid)` kills with its git children.
 */
export function startServerProcess(
  env: NodeJS.ProcessEnv,
  children: ChildProcess[],
  options: { detached?: boolean } = {},
): { child: ChildProcess; ready: Promise<string> } {
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached,
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${output}`)), 60_000);
    child.stdout!.on('data', () => {
      if (/listening on/.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
    });
    child.on('exit', (code, signal) => reject(new Error(`exited with ${code ?? signal}:\n${output}`)));
  });
  // A caller that kills the process without awaiting `ready` leaves no unhandled rejection.
  ready.catch(() => undefined);
  return { child, ready };
}
