/**
 * Where a pipeline's configuration reads its files: the project's repository at the pipeline's commit,
 * other projects the user may read, remote URLs (bounded, under the local-request rule) and the
 * templates the configuration language ships.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { canProject } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError } from '../core/errors.js';
import type { GitRepository } from '../git/repository.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { RepositoriesService } from '../repository/repositories.service.js';
import { addressProblem, localAddressProblem } from '../remote_mirrors/mirror-url.js';
import type { IncludeSources } from '../ci_config/types.js';
import { ciConfig } from './adapters.js';

export const REMOTE_TIMEOUT_MS = 10_000;
/** GitLab caps a remote include's body; 1 MiB keeps a pipeline's creation bounded. */
export const REMOTE_MAX_BYTES = 1024 * 1024;

/** A file's text at a commit, or null when there is none. */
export async function readFileAt(git: GitRepository, sha: string, filePath: string): Promise<string | null> {
  const clean = filePath.replace(/^\/+/, '');
  if (!clean || clean.split('/').some((part) => part === '..' || part === '')) return null;
  const slash = clean.lastIndexOf('/');
  const entry = await git.treeEntry(sha, slash < 0 ? '' : clean.slice(0, slash), clean.slice(slash + 1));
  if (!entry || entry.type !== 'blob') return null;
  return (await git.readBlob(entry.sha)).toString('utf8');
}

export interface SourcesContext {
  caller: Caller;
  git: GitRepository;
  sha: string;
  projects: ProjectsService;
  repositories: RepositoriesService;
  allowLocalRequests: boolean;
}

export function includeSources(ctx: SourcesContext): IncludeSources {
  return {
    local: (filePath) => readFileAt(ctx.git, ctx.sha, filePath),
    async project(fullPath, ref, file) {
      let view;
      try {
        view = await ctx.projects.find(ctx.caller, fullPath);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return 'forbidden';
        throw err;
      }
      if (!canProject(ctx.caller, 'read_code', ctx.projects.subject(view))) return 'forbidden';
      const git = ctx.repositories.open(view).git;
      const revision = ref ?? view.project.defaultBranch;
      const sha = revision ? await git.resolveCommit(revision) : null;
      if (!sha) return null;
      const content = await readFileAt(git, sha, file);
      return content === null ? null : { content, sha };
    },
    remote: (url) => fetchRemote(url, ctx.allowLocalRequests),
    template: async (name) => ciConfig().readTemplate(name),
  };
}

/**
 * A `lookup` for the connection itself: the address checked is the one connected to, so a name that
 * resolves elsewhere between a check and the connection (DNS rebinding) cannot reach a local address.
 */
function checkedLookup(
  hostname: string,
  options: dns.LookupOptions,
  callback: (
    err: NodeJS.ErrnoException | null,
    address: string | dns.LookupAddress[],
    family?: number,
  ) => void,
): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '');
    const problem = addresses.map((entry) => addressProblem(entry.address)).find((found) => found !== null);
    if (problem) return callback(Object.assign(new Error(`URL ${problem}`), { code: 'EBLOCKED' }), '');
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

/** GETs a remote include with a time and size bound; local addresses only when the instance allows them. */
export async function fetchRemote(url: string, allowLocal: boolean): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`Remote file \`${url}\` is not a valid address!`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error(`Remote file \`${url}\` is not a valid address!`);
  // Names are checked as they are connected to (checkedLookup); literals and `localhost` here.
  const problem = allowLocal ? null : await localAddressProblem(url, { resolve: false });
  if (problem) throw new Error(`Remote file \`${url}\` could not be fetched because of: URL ${problem}`);
  const get = parsed.protocol === 'https:' ? https.get : http.get;
  return new Promise<string>((resolve, reject) => {
    const failed = (reason: string) =>
      reject(new Error(`Remote file \`${url}\` could not be fetched because of ${reason}!`));
    const request = get(url, { lookup: allowLocal ? undefined : checkedLookup, timeout: REMOTE_TIMEOUT_MS });
    request.on('timeout', () => request.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    request.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EBLOCKED')
        reject(new Error(`Remote file \`${url}\` could not be fetched because of: ${err.message}`));
      else failed(err.code === 'ETIMEDOUT' ? 'a timeout' : 'a connection failed');
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        response.resume();
        return reject(
          new Error(`Remote file could not be fetched because of HTTP code \`${status}\` error!`),
        );
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > REMOTE_MAX_BYTES) {
          response.destroy();
          return reject(new Error(`Remote file \`${url}\` is too large!`));
        }
        chunks.push(chunk);
      });
      response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      response.on('error', () => failed('a connection failed'));
    });
  });
}

/** `**`, `*`, `?` and `{a,b}` globs as `rules:exists` reads them, against paths relative to the root. */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  const text = glob.replace(/^\/+/, '');
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '*' && text[i + 1] === '*') {
      const slash = text[i + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') {
      const end = text.indexOf('}', i);
      if (end < 0) out += '\\{';
      else {
        out += `(?:${text
          .slice(i + 1, end)
          .split(',')
          .map((part) => part.replace(/[.+^$()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
          .join('|')})`;
        i = end;
      }
    } else out += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}
