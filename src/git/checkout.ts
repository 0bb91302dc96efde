import { gitText } from './git.js';

/** The last commit of the checkout at `root`, abbreviated as GitLab's revision is; null without one. */
export async function checkoutRevision(root: string): Promise<string | null> {
  try {
    return (await gitText(['-C', root, 'log', '-n', '1', '--format=%h', '--abbrev=11'])) || null;
  } catch {
    return null;
  }
}
