import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

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

/**
 * A port for a server process that a test starts (and may restart) itself: below the kernel's ephemeral
 * range (32768 and up), from which connections and `listen(0)` take theirs, so nothing takes it between
 * two starts; and none that something listens on now.
 */
export function serverPort(): number {
  const taken = listeningPorts();
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 12768);
    if (!taken.has(port)) return port;
  }
}

/** TCP ports in the LISTEN state (`0A`), from /proc; none where it cannot be read. */
function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let table: string;
    try {
      table = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of table.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state === '0A') ports.add(parseInt(local.slice(local.lastIndexOf(':') + 1), 16));
    }
  }
  return ports;
}
