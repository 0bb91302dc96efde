// git's pre-receive and post-receive hook: reports the ref changes to the server that started
// receive-pack, which decides (pre-receive) or records them (post-receive). Exit 1 refuses the push.
import { execFileSync } from 'node:child_process';

const ZERO_SHA = '0000000000000000000000000000000000000000';
const hook = process.argv[2];

let input = '';
for await (const chunk of process.stdin) input += chunk;
const changes = input
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const [oldSha, newSha, ref] = line.split(' ');
    return { oldSha, newSha, ref, forced: false };
  });

if (hook === 'pre-receive') {
  // The pushed objects are visible here (git quarantines them for the hook), so ancestry can be asked.
  for (const change of changes) {
    if (change.oldSha === ZERO_SHA || change.newSha === ZERO_SHA) continue;
    try {
      execFileSync('git', ['merge-base', '--is-ancestor', change.oldSha, change.newSha], { stdio: 'ignore' });
    } catch {
      change.forced = true;
    }
    // The paths a branch update changes, for content checks (code owners) that need the quarantined objects.
    if (change.ref.startsWith('refs/heads/')) {
      try {
        const names = execFileSync(
          'git',
          ['diff', '--name-only', '-z', '--no-renames', change.oldSha, change.newSha],
          {
            maxBuffer: 64 * 1024 * 1024,
          },
        );
        change.paths = names.toString('utf8').split('\0').filter(Boolean);
      } catch {
        // Without the paths the content checks see none; the rest of the push is decided as before.
      }
    }
  }
}

let allowed = false;
try {
  const response = await fetch(`${process.env.FORGE_HOOK_URL}/${hook}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // The push rule reads the new commits where git quarantines them until the hook accepts the push.
    body: JSON.stringify({
      secret: process.env.FORGE_HOOK_SECRET,
      changes,
      // `git push -o ci.skip`: receive-pack hands the push options to the hooks in the environment.
      pushOptions: Array.from(
        { length: Number(process.env.GIT_PUSH_OPTION_COUNT ?? 0) },
        (_, i) => process.env[`GIT_PUSH_OPTION_${i}`] ?? '',
      ),
      quarantine: {
        GIT_OBJECT_DIRECTORY: process.env.GIT_OBJECT_DIRECTORY ?? '',
        GIT_ALTERNATE_OBJECT_DIRECTORIES: process.env.GIT_ALTERNATE_OBJECT_DIRECTORIES ?? '',
      },
    }),
  });
  const result = await response.json();
  if (result.message) process.stderr.write(`GitLab: ${result.message}\n`);
  allowed = response.ok && result.allowed === true;
} catch {
  process.stderr.write('GitLab: Failed to authorize your Git request: internal API unreachable\n');
}
process.exit(allowed ? 0 : 1);
