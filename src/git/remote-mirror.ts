/**
 * Talking to another git server for push mirrors: listing its refs, pushing to it, and the mirror's SSH
 * key pair. Remote commands start through the launcher like every git process, and are killed when
 * they stay silent too long; key generation runs `ssh-keygen` the same way. Credentials never reach a
 * command line: HTTP user and password come from an inline credential helper that reads them from the
 * child's environment, the SSH key from a file only the server's user can read, removed after each run.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnGit, type GitProcess } from './git.js';
import { launch } from './launcher.js';

/** How the remote is reached: URL without user info, and the secrets to authenticate with. */
export interface RemoteTarget {
  /** The remote's URL without user name or password. */
  url: string;
  user?: string | null;
  password?: string | null;
  /** OpenSSH private key, for `ssh://` remotes whose mirror authenticates by key. */
  privateKey?: string | null;
  /** known_hosts lines the SSH server must match; empty trusts and records the first keys seen. */
  knownHosts?: string | null;
}

/** What a remote operation learnt on the way: host keys recorded on first use. */
export interface RemoteOutcome {
  knownHosts: string | null;
}

/** A remote operation that failed: git's message, its credentials already removed. */
export class RemoteGitError extends Error {}

/** A remote command silent for this long is killed and failed; the queue retries it. */
const REMOTE_TIMEOUT_MS = 120_000;

/**
 * Runs a process to its end and gives its stdout; a non-zero exit fails with its stderr (git's own
 * message), and a process that writes nothing for `silentMs` is killed.
 */
function finish(child: GitProcess, silentMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    let timer: NodeJS.Timeout;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, silentMs);
    };
    arm();
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      into.push(chunk);
      arm();
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));
    child.stdin.on('error', () => undefined);
    child.stdin.end();
    child.on('error', (error: Error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code: number | null) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString('utf8').trim();
      if (timedOut) reject(new Error(`no answer from the remote within ${silentMs / 1000} s`));
      else if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(stderr || `exited with ${code}`));
    });
  });
}

/** A git command against a remote, with the mirror's credentials in its environment only. */
type RemoteGit = (args: string[]) => Promise<string>;

const CREDENTIAL_HELPER =
  '!f() { test "$1" = get || exit 0; echo "username=${FORGE_MIRROR_USER}"; echo "password=${FORGE_MIRROR_PASSWORD}"; }; f';

/** Replaces every given secret (and its URL-encoded form) in `text` with `*****`. */
export function scrubSecrets(text: string, secrets: Array<string | null | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join('*****');
  }
  // Any user info git may echo back in a URL.
  return out.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi, '$1*****:*****@');
}

/** The URL git is given: the user name for SSH (it carries no secret there), none for HTTP. */
function commandUrl(target: RemoteTarget): string {
  const url = new URL(target.url);
  if (url.protocol === 'ssh:' && target.user) url.username = encodeURIComponent(target.user);
  return url.toString();
}

async function withRemote<T>(
  cwd: string | null,
  target: RemoteTarget,
  task: (git: RemoteGit, url: string) => Promise<T>,
): Promise<T & RemoteOutcome> {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-mirror-'));
  const env: Record<string, string> = {};
  // The first empties any inherited helper list, the second reads the secrets from the environment.
  const config = ['-c', 'credential.helper=', '-c', `credential.helper=${CREDENTIAL_HELPER}`];
  const knownHostsFile = path.join(temp, 'known_hosts');
  const ssh = new URL(target.url).protocol === 'ssh:';
  try {
    if (target.user) env.FORGE_MIRROR_USER = target.user;
    if (target.password) env.FORGE_MIRROR_PASSWORD = target.password;
    if (ssh) {
      fs.writeFileSync(knownHostsFile, target.knownHosts ? `${target.knownHosts.trim()}\n` : '', {
        mode: 0o600,
      });
      const options = [
        '-F /dev/null',
        '-o BatchMode=yes',
        '-o ConnectTimeout=20',
        `-o UserKnownHostsFile=${knownHostsFile}`,
        '-o GlobalKnownHostsFile=/dev/null',
        // Keys given are enforced; without any, the first connection's keys are recorded (accept-new).
        `-o StrictHostKeyChecking=${target.knownHosts ? 'yes' : 'accept-new'}`,
      ];
      if (target.privateKey) {
        const keyFile = path.join(temp, 'id');
        fs.writeFileSync(
          keyFile,
          target.privateKey.endsWith('\n') ? target.privateKey : `${target.privateKey}\n`,
          {
            mode: 0o600,
          },
        );
        options.push(`-i ${keyFile}`, '-o IdentitiesOnly=yes');
      }
      env.GIT_SSH_COMMAND = `ssh ${options.join(' ')}`;
    }
    // Without a repository, git runs in the empty temporary directory, where it finds none to read.
    const where = cwd ? [] : ['-C', temp];
    const git: RemoteGit = (args) =>
      finish(spawnGit([...where, ...config, ...args], { gitDir: cwd ?? undefined, env }), REMOTE_TIMEOUT_MS);
    let result: T;
    try {
      result = await task(git, commandUrl(target));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new RemoteGitError(scrubSecrets(message.trim(), [target.password, target.user]));
    }
    const learnt = ssh && fs.existsSync(knownHostsFile) ? fs.readFileSync(knownHostsFile, 'utf8').trim() : '';
    return { ...result, knownHosts: learnt || target.knownHosts || null };
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

/** The remote's branches and tags (peeled tags left out), by full ref name. */
export async function listRemoteRefs(
  target: RemoteTarget,
): Promise<{ refs: Map<string, string> } & RemoteOutcome> {
  return withRemote(null, target, async (git, url) => {
    const output = await git(['ls-remote', '--refs', url, 'refs/heads/*', 'refs/tags/*']);
    const refs = new Map<string, string>();
    for (const line of output.split('\n')) {
      const [sha, ref] = line.trim().split(/\s+/);
      if (sha && ref) refs.set(ref, sha);
    }
    return { refs };
  });
}

/**
 * Pushes `refspecs` (`+refs/heads/x:refs/heads/x`, `:refs/heads/gone`) from the repository at `gitDir`.
 * Refs the remote refuses make the whole call fail with git's report; the others were pushed.
 */
export async function pushToRemote(
  gitDir: string,
  target: RemoteTarget,
  refspecs: string[],
): Promise<RemoteOutcome> {
  if (refspecs.length === 0) return { knownHosts: target.knownHosts ?? null };
  return withRemote(gitDir, target, async (git, url) => {
    await git(['push', '--porcelain', '--no-verify', url, ...refspecs]);
    return {};
  });
}

/** A new ed25519 key pair in OpenSSH format. */
export async function generateSshKeyPair(
  comment: string,
): Promise<{ privateKey: string; publicKey: string }> {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-keygen-'));
  try {
    const file = path.join(temp, 'id');
    await finish(
      launch('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file], {
        PATH: process.env.PATH,
      }),
      REMOTE_TIMEOUT_MS,
    );
    return {
      privateKey: fs.readFileSync(file, 'utf8'),
      publicKey: fs.readFileSync(`${file}.pub`, 'utf8').trim(),
    };
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

/** An OpenSSH public key's SHA256 fingerprint (`SHA256:...`), or null when it is not one. */
export function sshFingerprint(key: string): string | null {
  const parts = key.trim().split(/\s+/);
  const blob = parts.find((part, i) => i > 0 && /^AAAA[A-Za-z0-9+/]+=*$/.test(part));
  if (!blob) return null;
  const bytes = Buffer.from(blob, 'base64');
  // The blob starts with its key type, as a length-prefixed string.
  if (bytes.length < 4) return null;
  const typeLength = bytes.readUInt32BE(0);
  const type = bytes.subarray(4, 4 + typeLength).toString('latin1');
  if (!/^(ssh-|ecdsa-|sk-)/.test(type) || !parts.includes(type)) return null;
  return `SHA256:${crypto.createHash('sha256').update(bytes).digest('base64').replace(/=+$/, '')}`;
}
