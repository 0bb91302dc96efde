/** Running the python-gitlab scripts in test/clients/ with Debian's python3-gitlab. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';

/** Whether Debian's python3-gitlab is installed; tests that need it say why they are skipped. */
export const pythonGitlab = await run(PYTHON, ['-c', 'import gitlab']).then(
  () => true,
  () => false,
);

/** Runs `test/clients/<script>` with the given arguments and returns what it printed. */
export async function runPythonClient(script: string, args: string[]): Promise<string> {
  const path = fileURLToPath(new URL(`../clients/${script}`, import.meta.url));
  const { stdout } = await run(PYTHON, [path, ...args], { timeout: 60_000 });
  return stdout;
}
