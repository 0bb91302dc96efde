/**
 * Reads of a project's repository: tree, blobs, archives, comparisons, contributors and merge bases.
 * The pipeline resolved the project and checked `read_code` (the contract's `x-ability`); the rest is git.
 */
import type { Readable } from 'node:stream';
import type { operations } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { ApiError, badParameter, notFound } from '../core/errors.js';
import { offsetHeaders, perPageOf, requestUrl, type RequestInfo } from '../core/pagination.js';
import type { GitCommit } from '../git/commits.js';
import type { FileDiff } from '../git/diffs.js';
import { ProcessFailed } from '../git/process-stream.js';
import type { OpenRepository } from './repositories.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { ServiceRegistry } from '../core/family.js';
import type { GitObject, TreeEntry } from '../git/repository.js';
import { positionOf } from '../git/tree-listing.js';
import { rateLimitSubject } from '../core/rate-limit.js';
import { archiveContentType, archivePrefix, GIT_FORMAT, trimSlashes, type ArchiveFormat } from './archive.js';

type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;
export type TreeParams = Query<'listRepositoryTree'>;
export type ArchiveParams = Query<'getRepositoryArchive'>;
export type CompareParams = Query<'compareRepositoryRefs'>;
export type ContributorsParams = Query<'listRepositoryContributors'>;

/** GitLab's `large_blob` threshold: bigger blobs count against their own rate limit. */
export const LARGE_BLOB_BYTES = 10 * 1024 * 1024;
/** Git's own test for binary content looks at this many leading bytes for a NUL. */
const BINARY_SNIFF_BYTES = 8000;
/** GitLab reads at most this many commits to count contributors. */
const CONTRIBUTOR_COMMITS = 2000;

export type { GitObject, TreeEntry };

export interface Contributor {
  name: string;
  email: string;
  commits: number;
}

export interface Comparison {
  commits: GitCommit[];
  diffs: FileDiff[];
  generated: Set<string>;
  overflow: boolean;
  same: boolean;
  /** `<from>...<to>` of the compare page. */
  fromSha: string;
  toSha: string;
}

/** GitLab's (Gitaly's) keyset token: base64 of `{"file_name": <path of the last entry>}`. */
export const encodePageToken = (entry: TreeEntry) =>
  Buffer.from(JSON.stringify({ file_name: entry.path })).toString('base64');

/** Where the page after `token` starts; older GitLab releases used the last entry's object ID. */
function pageStart(entries: readonly TreeEntry[], token: string): number {
  let fileName: unknown;
  try {
    fileName = (JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { file_name?: unknown })
      .file_name;
  } catch {
    fileName = undefined;
  }
  const index =
    typeof fileName === 'string'
      ? positionOf(entries, fileName)
      : entries.findIndex((entry) => entry.id === token);
  if (index === -1) throw badParameter('page_token is invalid');
  return index + 1;
}

/** Ruby's casecmp, which GitLab sorts names and emails with. */
function caseInsensitive(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

export class RepositoryService {
  constructor(private readonly services: Pick<ServiceRegistry, 'repositories' | 'rateLimiter'>) {}

  async tree(
    caller: Caller,
    view: ProjectView,
    params: TreeParams,
    request: RequestInfo,
  ): Promise<{ entries: readonly TreeEntry[]; headers: Record<string, string> }> {
    const { git } = this.services.repositories.open(view);
    if (params.pagination === 'none' && !params.recursive)
      throw badParameter('pagination cannot be "none" unless "recursive" is true');
    const ref = params.ref ?? view.project.defaultBranch;
    const commit = ref ? await git.resolveCommit(ref) : null;
    if (!commit) throw notFound('Tree');
    const path = trimSlashes(params.path ?? '');
    const tree = await git.object(path ? `${commit}:${path}` : `${commit}^{tree}`);
    if (tree?.type !== 'tree') throw notFound('Tree');
    const entries = await git.tree(tree.id, path, params.recursive ?? false);
    if (params.pagination === 'none') return { entries, headers: {} };

    const perPage = perPageOf({ per_page: params.per_page });
    if (params.pagination === 'keyset') {
      const start = params.page_token ? pageStart(entries, params.page_token) : 0;
      const page = entries.slice(start, start + perPage);
      const headers: Record<string, string> = { 'X-Per-Page': String(perPage) };
      if (start + perPage < entries.length) {
        const next = requestUrl(request, {
          page_token: encodePageToken(page[page.length - 1]),
          page: undefined,
        });
        headers.Link = `<${next}>; rel="next"`;
      }
      return { entries: page, headers };
    }
    const page = Math.max(params.page ?? 1, 1);
    return {
      entries: entries.slice((page - 1) * perPage, page * perPage),
      headers: offsetHeaders(entries.length, page, perPage, request),
    };
  }

  /** The blob `sha` names, counted against `large_blob` when it is big: 404 Blob Not Found otherwise. */
  private async findBlob(
    caller: Caller,
    view: ProjectView,
    sha: string,
    request: RequestInfo,
  ): Promise<{ repo: OpenRepository; blob: GitObject }> {
    const repo = this.services.repositories.open(view);
    // Any revision git knows (`main:README.md` too) may name the blob; option-like input names none.
    const object = sha.startsWith('-') ? null : await repo.git.object(sha);
    if (object?.type !== 'blob') throw notFound('Blob');
    if (object.size > LARGE_BLOB_BYTES)
      this.services.rateLimiter.hit('large_blob', rateLimitSubject(caller.user, request.ip));
    return { repo, blob: object };
  }

  async blob(
    caller: Caller,
    view: ProjectView,
    sha: string,
    request: RequestInfo,
  ): Promise<{ blob: GitObject; content: Buffer }> {
    const { repo, blob } = await this.findBlob(caller, view, sha, request);
    return { blob, content: await repo.git.readBlob(blob.id) };
  }

  /** The blob's bytes as a stream, and whether they look binary (a NUL among the first 8000 bytes). */
  async rawBlob(
    caller: Caller,
    view: ProjectView,
    sha: string,
    request: RequestInfo,
  ): Promise<{ blob: GitObject; binary: boolean; stream: Readable }> {
    const { repo, blob } = await this.findBlob(caller, view, sha, request);
    const { head, stream } = await repo.git.streamBlob(blob.id, BINARY_SNIFF_BYTES);
    return { blob, binary: head.subarray(0, BINARY_SNIFF_BYTES).includes(0), stream };
  }

  async archive(
    caller: Caller,
    view: ProjectView,
    format: ArchiveFormat,
    params: ArchiveParams,
  ): Promise<{ stream: Readable; filename: string; contentType: string }> {
    const { git } = this.services.repositories.open(view);
    const ref = params.sha ?? view.project.defaultBranch;
    const commit = ref ? await git.resolveCommit(ref) : null;
    if (!ref || !commit) throw notFound('File');
    const path = trimSlashes(params.path ?? '');
    if (path && !(await git.object(`${commit}:${path}`))) throw notFound('File');
    const excludePaths = (params.exclude_paths ?? []).map(trimSlashes).filter(Boolean);
    const prefix = archivePrefix(view.project.path, ref, commit, path);
    try {
      const { stream } = await git.archive({
        commit,
        format: GIT_FORMAT[format],
        prefix,
        path,
        excludePaths,
      });
      return { stream, filename: `${prefix}.${format}`, contentType: archiveContentType(format) };
    } catch (err) {
      // git refused before writing anything (say, every path was excluded): nothing to send.
      if (err instanceof ProcessFailed) throw notFound('File');
      throw err;
    }
  }

  async compare(
    caller: Caller,
    view: ProjectView,
    params: CompareParams,
    /** GitLab's refusal names the project as the request did. */
    requestedId: string | number = view.project.id,
  ): Promise<{ repo: OpenRepository; comparison: Comparison }> {
    const repo = this.services.repositories.open(view);
    const { git } = repo;
    if (params.from_project_id !== undefined && params.from_project_id !== view.project.id) {
      // Only forks can be compared across projects, and forge-api has none.
      throw new ApiError(400, {
        message: `Target project id:${params.from_project_id} is not a fork of project id:${requestedId}`,
      });
    }
    const [fromSha, toSha] = await Promise.all([
      git.resolveCommit(params.from),
      git.resolveCommit(params.to),
    ]);
    if (!fromSha || !toSha) throw notFound('Ref');
    const same = fromSha === toSha;
    const compared = same ? null : await git.compare(fromSha, toSha, params.straight ?? false);
    return {
      repo,
      comparison: {
        commits: compared?.commits ?? [],
        diffs: compared?.diffs ?? [],
        generated: compared?.generated ?? new Set(),
        overflow: compared?.overflow ?? false,
        same,
        fromSha: compared?.base ?? fromSha,
        toSha,
      },
    };
  }

  async contributors(
    caller: Caller,
    view: ProjectView,
    params: ContributorsParams,
    request: RequestInfo,
  ): Promise<{ contributors: Contributor[]; headers: Record<string, string> }> {
    const { git } = this.services.repositories.open(view);
    const ref = params.ref ?? view.project.defaultBranch;
    const commit = ref ? await git.resolveCommit(ref) : null;
    // GitLab answers any failure to read the history with a bare 404.
    if (!commit) throw notFound();
    const byEmail = new Map<string, Contributor>();
    for (const { name, email } of await git.authors(commit, CONTRIBUTOR_COMMITS)) {
      const contributor = byEmail.get(email) ?? { name: '', email, commits: 0 };
      // The newest commit comes first; its name stands unless it is blank.
      if (!contributor.name.trim()) contributor.name = name;
      contributor.commits += 1;
      byEmail.set(email, contributor);
    }
    const orderBy = params.order_by ?? 'commits';
    const direction = params.sort === 'desc' ? -1 : 1;
    const compare = (a: Contributor, b: Contributor) =>
      orderBy === 'commits' ? a.commits - b.commits : caseInsensitive(a[orderBy], b[orderBy]);
    const all = [...byEmail.values()].sort((a, b) => direction * compare(a, b));
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    return {
      contributors: all.slice((page - 1) * perPage, page * perPage),
      headers: offsetHeaders(all.length, page, perPage, request),
    };
  }

  async mergeBase(
    caller: Caller,
    view: ProjectView,
    refs: string[],
  ): Promise<{ repo: OpenRepository; commit: GitCommit }> {
    const repo = this.services.repositories.open(view);
    // GitLab also takes `refs=a,b`: every value is split at its commas.
    const names = refs.flatMap((ref) => ref.split(',')).filter((ref) => ref !== '');
    if (names.length < 2) throw new ApiError(400, { message: 'Provide at least 2 refs' });
    const shas = await Promise.all(names.map((name) => repo.git.resolveCommit(name)));
    const unknown = names.filter((_, i) => !shas[i]);
    if (unknown.length > 0) {
      const noun = unknown.length === 1 ? 'ref' : 'refs';
      throw new ApiError(400, { message: `Could not find ${noun}: ${unknown.join(', ')}` });
    }
    const base = await repo.git.mergeBase(shas as string[]);
    const commit = base ? await repo.git.commit(base) : null;
    if (!commit) throw notFound('Merge Base');
    return { repo, commit };
  }
}
