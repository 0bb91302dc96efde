/**
 * Fault injection for the crash tests: `FORGE_FAULT_INJECT=<point>` makes the process kill itself with
 * SIGKILL the first time it reaches that named point, as an OOM killer or a power cut would, so that a
 * test can stop it between two steps timing alone would rarely separate. When the process leads its
 * process group (a test starts it so), the group goes too: git children die mid-write as well.
 *
 * Read once at start; unset (always, outside tests) a point costs one comparison. Points sit on the
 * write paths of projects and pushes, never on a per-read path. The README lists them.
 */
const armed = process.env.FORGE_FAULT_INJECT || undefined;

export function faultPoint(name: string): void {
  if (armed === undefined || name !== armed) return;
  try {
    process.kill(-process.pid, 'SIGKILL');
  } catch {
    // Not a process group leader: only this process goes.
  }
  process.kill(process.pid, 'SIGKILL');
}

/**
 * Tests only: `FORGE_FAULT_PAUSE=<point>` holds background work at that named point for as long as the
 * file `FORGE_FAULT_PAUSE_FILE` exists, so a test can act while, say, a storage move is half done.
 * Read at each call (tests set it in-process); unset, it costs one lookup.
 */
export async function faultPause(name: string): Promise<void> {
  const file = process.env.FORGE_FAULT_PAUSE_FILE;
  if (process.env.FORGE_FAULT_PAUSE !== name || !file) return;
  const { existsSync } = await import('node:fs');
  while (existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 25));
}
