/**
 * Getting the sources as GitLab Runner's shell executor does for a fresh directory: `git init`, the
 * remote with the job token in its URL, `git fetch` of the payload's refspecs at its depth, a checkout of
 * the job's sha. GIT_STRATEGY=none skips it; GIT_DEPTH overrides the depth.
 */
import type { JobContext } from './context.js';
import { runProcess, type RunningProcess } from './proc.js';
import { notice, warning } from './shell.js';

/** The repository URL without its credentials, for the trace. */
export function cleanUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}

export async function getSources(
  context: JobContext,
  track: (process: RunningProcess) => RunningProcess,
): Promise<boolean> {
  const { job, projectDir, trace, lookup } = context;
  const strategy = lookup('GIT_STRATEGY');
  if (strategy === 'none' || strategy === 'empty') {
    trace.write(notice('Skipping Git repository setup'));
    return true;
  }
  const git = job.git_info;
  const depthVar = Number(lookup('GIT_DEPTH'));
  const depth =
    Number.isInteger(depthVar) && depthVar >= 0 && lookup('GIT_DEPTH') ? depthVar : (git.depth ?? 0);
  trace.write(
    notice(depth > 0 ? `Fetching changes with git depth set to ${depth}...` : 'Fetching changes...'),
  );
  const env = { ...context.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', LC_ALL: 'C' };
  const run = async (args: string[]): Promise<number> =>
    track(
      runProcess('git', args, {
        cwd: projectDir,
        env,
        user: context.user,
        onOutput: (chunk) => trace.write(chunk),
      }),
    ).done;

  if ((await run(['init', '-q', projectDir])) !== 0) return false;
  trace.write(`Initialized empty Git repository in ${projectDir}/.git/\n`);
  trace.write(notice('Created fresh repository.'));
  if ((await run(['remote', 'add', 'origin', git.repo_url])) !== 0) return false;
  const refspecs = git.refspecs?.length ? git.refspecs : defaultRefspecs(git.ref, git.ref_type);
  const depthArgs = depth > 0 ? ['--depth', String(depth)] : [];
  if ((await run(['fetch', 'origin', ...refspecs, ...depthArgs, '--prune', '--quiet'])) !== 0) {
    // One refspec the server lacks fails the whole fetch: take those it has, then the sha itself.
    trace.write(warning('fetching all refspecs failed; fetching them one by one'));
    for (const refspec of refspecs) await run(['fetch', 'origin', refspec, ...depthArgs, '--quiet']);
  }
  trace.write(
    notice(`Checking out ${git.sha.slice(0, 8)} as detached HEAD (ref is ${git.ref ?? git.sha})...`),
  );
  if ((await run(['-c', 'advice.detachedHead=false', 'checkout', '-f', '-q', git.sha])) !== 0) {
    // The sha may be past the fetched depth or outside the refspecs: fetch it by itself.
    trace.write(warning(`${git.sha.slice(0, 8)} was not fetched; fetching it directly`));
    if ((await run(['fetch', 'origin', git.sha, ...depthArgs, '--quiet'])) !== 0) return false;
    if ((await run(['-c', 'advice.detachedHead=false', 'checkout', '-f', '-q', git.sha])) !== 0) return false;
  }
  trace.write(notice('Skipping Git submodules setup'));
  return true;
}

function defaultRefspecs(ref: string | undefined, refType: string | undefined): string[] {
  if (!ref) return ['+refs/heads/*:refs/remotes/origin/*'];
  return refType === 'tag'
    ? [`+refs/tags/${ref}:refs/tags/${ref}`]
    : [`+refs/heads/${ref}:refs/remotes/origin/${ref}`];
}
