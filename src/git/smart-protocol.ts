/**
 * git's smart protocol over stateless RPC: the ref advertisement, upload-pack (clone, fetch) and
 * receive-pack (push), run as `git <service> --stateless-rpc` with their input and output streamed.
 * Pushes run the hooks in ./hooks, which report to the URL their environment names (see git_http).
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, pipeline, type Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { spawnGit } from './git.js';

export type GitService = 'git-upload-pack' | 'git-receive-pack';

export const isGitService = (service: unknown): service is GitService =>
  service === 'git-upload-pack' || service === 'git-receive-pack';

/** The hooks directory, found from src/ (tests) and from dist/src/ (the build) alike. */
const HOOKS_DIR = [new URL('./hooks', import.meta.url), new URL('../../../src/git/hooks', import.meta.url)]
  .map((url) => fileURLToPath(url))
  .find((candidate) => fs.existsSync(`${candidate}/hook.mjs`)) as string;

export function pktLine(text: string): string {
  return (text.length + 4).toString(16).padStart(4, '0') + text;
}

/**
 * git's quarantine of a running push, as the hook reported it: only object directories inside the
 * repository are taken (alternates may also name the lenders of a fork).
 */
export function quarantineEnv(
  dir: string,
  reported: Record<string, string> | undefined,
): Record<string, string> {
  const objects = reported?.GIT_OBJECT_DIRECTORY ?? '';
  if (!objects || !path.resolve(objects).startsWith(path.join(path.resolve(dir), 'objects') + path.sep))
    return {};
  const env: Record<string, string> = { GIT_OBJECT_DIRECTORY: objects };
  if (reported?.GIT_ALTERNATE_OBJECT_DIRECTORIES)
    env.GIT_ALTERNATE_OBJECT_DIRECTORIES = reported.GIT_ALTERNATE_OBJECT_DIRECTORIES;
  return env;
}

/** How a service runs: the hooks' environment, and the client's `Git-Protocol` header. */
export interface ServiceOptions {
  env: Record<string, string>;
  protocol: string;
}

const serviceEnv = ({ env, protocol }: ServiceOptions) => ({
  ...env,
  ...(protocol ? { GIT_PROTOCOL: protocol } : {}),
});

/**
 * The server's own refs (merge request heads) are neither shown to nor updated by a push, as in GitLab;
 * push options (`git push -o`) are offered by every repository, whenever it was made.
 */
const receiveConfig = (service: GitService) =>
  service === 'git-receive-pack'
    ? ['-c', 'receive.hideRefs=refs/merge-requests', '-c', 'receive.advertisePushOptions=true']
    : [];

/** The ref advertisement of `GET info/refs?service=…`. */
export function advertiseRefs(service: GitService, dir: string, options: ServiceOptions): Readable {
  const child = spawnGit(
    [...receiveConfig(service), service.slice(4), '--stateless-rpc', '--advertise-refs', dir],
    { env: serviceEnv(options) },
  );
  child.stdin!.end();
  const body = new PassThrough();
  // Protocol v2 clients get the capabilities straight away, without the service announcement.
  if (!(service === 'git-upload-pack' && /version=2/.test(options.protocol))) {
    body.write(`${pktLine(`# service=${service}\n`)}0000`);
  }
  pipeline(child.stdout!, body, () => undefined);
  return body;
}

/** One RPC of the service: `input` is the client's request, the result its response; `onExit` runs once git is gone. */
export function runService(
  service: GitService,
  dir: string,
  input: Readable,
  options: ServiceOptions & { onExit?: () => void },
): Readable {
  const args = [...receiveConfig(service), service.slice(4), '--stateless-rpc', dir];
  // git's own `gc --auto` after a push could prune objects that forks borrow: housekeeping, which
  // knows about lenders, runs on the queue after every push instead.
  if (service === 'git-receive-pack')
    args.unshift('-c', `core.hooksPath=${HOOKS_DIR}`, '-c', 'receive.autogc=false');
  const child = spawnGit(args, { env: serviceEnv(options) });
  if (options.onExit) {
    child.once('close', options.onExit);
    child.once('error', options.onExit);
  }
  pipeline(input, child.stdin!, () => undefined);
  return pipeline(child.stdout!, new PassThrough(), () => undefined);
}
