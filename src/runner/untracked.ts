/** Git's untracked files in the project directory (`untracked: true` of artifacts and cache). */
import type { JobContext } from './context.js';
import { runProcess } from './proc.js';

export async function untrackedFiles(context: JobContext): Promise<string[]> {
  const out: Buffer[] = [];
  const code = await runProcess('git', ['ls-files', '-o', '-z'], {
    cwd: context.projectDir,
    env: { ...context.env, LC_ALL: 'C' },
    user: context.user,
    onOutput: (chunk) => out.push(chunk),
  }).done;
  if (code !== 0) return [];
  return Buffer.concat(out)
    .toString()
    .split('\0')
    .filter((file) => file.length > 0);
}
