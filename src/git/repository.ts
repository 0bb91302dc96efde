/**
 * One project's repository as the families read and write it: the only way to git outside src/git/.
 * A GitRepository is opened per request (RepositoriesService.open) from the repository's disk path.
 *
 * Rules every method keeps, so that no family has to:
 * - user-supplied revisions go after `--end-of-options` (or through stdin) and paths after `--` as
 *   literal pathspecs, so no input is ever read as an option;
 * - object reads (`objects`, `readBlob`, `streamBlob`, `readTagObject`), tree listings and revision
 *   resolution go through `ObjectReader`, over the repository's long-lived `cat-file --batch-command`
 *   process: no spawn per read.
 */
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { startArchive, type ArchiveRequest } from './archive.js';
import { buildCommit, type BuildCommitOptions, type TreeSource } from './commit-builder.js';
import { commitStats, type CommitStats } from './commit-stats.js';
import { listTree, parseTree, positionOf, type TreeEntry } from './tree-listing.js';
import { logCommits, logWithBoundary, readCommits, type GitCommit } from './commits.js';
import {
  DEFAULT_DIFF_LIMITS,
  EMPTY_TREE,
  generatedPaths,
  readDiffs,
  type DiffLimits,
  type DiffResult,
  type FileDiff,
} from './diffs.js';
import { git, GitError, gitText, spawnGit } from './git.js';
import { detectLicense, type DetectedLicense } from './license.js';
import { streamProcess, type ProcessOutput } from './process-stream.js';
import { digestRefs, readRepositoryState, type RepositoryState } from './repository-state.js';
import type { Signature } from './storage.js';
import { assertObjectId, isValidRefName } from './ref-names.js';
import {
  mergedTree,
  rebase,
  treeOf,
  writeCommit,
  type RebaseResult,
  type WriteCommitOptions,
} from './merges.js';
import { parseTagObject, sortedTagNames, tagFromObject, type GitTag, type TagOrder } from './tags.js';
import { objectBatches } from './object-batch.js';
import { readRefs, type StoredRef } from './ref-store.js';
import { LruCache, WeightedLruCache } from '../core/lru.js';

export interface GitObject {
  id: string;
  type: string;
  size: number;
}

/** A branch head as `git for-each-ref` reports it. */
export interface BranchRef {
  name: string;
  sha: string;
  /** Committer date of the head, in seconds. */
  date: number;
}

export interface RefEntry {
  /** The full ref name, `refs/heads/main`. */
  ref: string;
  sha: string;
}

/** A change to one ref, applied in a ref transaction with its expected old value. */
export interface RefUpdate {
  ref: string;
  oldSha: string;
  newSha: string;
}

/** What `git log` walks. Revisions and ranges may be user input; paths are literal. */
export interface LogQuery {
  /** Revisions or ranges (`a..b`); ignored with `all`. */
  revisions?: string[];
  all?: boolean;
  paths?: string[];
  skip?: number;
  maxCount?: number;
  firstParent?: boolean;
  topoOrder?: boolean;
  reverse?: boolean;
  /** A fixed string matched against author names and emails. */
  author?: string;
  /** Epoch seconds, inclusive. */
  since?: number;
  until?: number;
}

export interface BlameRange {
  sha: string;
  lines: string[];
}

const HEADS = 'refs/heads/';
const ZERO_SHA = '0'.repeat(40);
const OBJECT_ID = /^([0-9a-f]{40}|[0-9a-f]{64})$/;

/** Longer than any ref git can store plus a path: such a revision names nothing. */
const MAX_REVISION_LENGTH = 4096;

/** A revision that can be given to git at all: not empty, not option-like, on one line, not huge. */
export const isPlainRevision = (revision: string) =>
  revision !== '' &&
  revision.length <= MAX_REVISION_LENGTH &&
  !revision.startsWith('-') &&
  !/[\n\r\0]/.test(revision);

const literal = (path: string) => `:(literal)${path}`;

const TAGS = 'refs/tags/';
/** Sorted tag names by ref-store snapshot: a snapshot that is no longer current is collected with them. */
const SORTED_TAGS = new WeakMap<object, Map<string, string[]>>();
const TAG_INDEXES = new WeakMap<object, Map<string, string>>();

/** Tag name to the object its ref names, per ref-store snapshot. */
function tagIndex(refs: StoredRef[]): Map<string, string> {
  let index = TAG_INDEXES.get(refs);
  if (!index) {
    index = new Map();
    for (const { ref, sha } of refs) if (ref.startsWith(TAGS)) index.set(ref.slice(TAGS.length), sha);
    TAG_INDEXES.set(refs, index);
  }
  return index;
}
const MERGED_BRANCHES = new WeakMap<object, Map<string, RefEntry[]>>();
/** Commits by id: immutable, so shared by every repository and never invalidated. */
const COMMITS = new LruCache<string, GitCommit>(20_000);
const MERGE_BASES = new LruCache<string, string | null>(10_000);
const ANCESTRY = new LruCache<string, boolean>(10_000);
const COMMIT_COUNTS = new LruCache<string, number>(10_000);
const COMMIT_STATS = new LruCache<string, CommitStats>(20_000);
/** A `<rev>:<path>` whose path starts with `.` or `..` as a whole segment. */
const RELATIVE_TREE_PATH = /:\.\.?(\/|$)/;
/** An object id, its tree, or a path in it: what these name never changes. */
const FIXED_REVISION = /^(?:[0-9a-f]{40}|[0-9a-f]{64})(?:\^\{tree\}|:[^\n\r\0]*)?$/;
/** Objects found by fixed revisions, per repository. Only finds are kept: a missing object may arrive. */
const FIXED_OBJECTS = new LruCache<string, GitObject>(50_000);

/** Values by commit id from `cache`, with one `load` for the ids it lacks. */
async function readThrough<V>(
  cache: LruCache<string, V>,
  ids: string[],
  load: (missing: string[]) => Promise<Map<string, V>>,
): Promise<Map<string, V>> {
  ids.forEach(assertObjectId);
  const found = new Map<string, V>();
  const missing: string[] = [];
  for (const id of ids) {
    const cached = cache.get(id);
    if (cached) found.set(id, cached);
    else missing.push(id);
  }
  if (missing.length > 0)
    for (const [id, value] of await load(missing)) {
      cache.set(id, value);
      found.set(id, value);
    }
  return found;
}

/** A commit object's header lines, before its message; bytes kept as latin1 so no name can break a line. */
const commitHeaders = (data: Buffer) => {
  const end = data.indexOf('\n\n');
  return data.toString('latin1', 0, end === -1 ? data.length : end);
};

/** The answer kept under `key` (ids fix it for good), or `load`'s, then kept. */
async function remembered<V>(cache: LruCache<string, V>, key: string, load: () => Promise<V>): Promise<V> {
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const value = await load();
  cache.set(key, value);
  return value;
}

/** See GitRepository.compare. */
export interface GitComparison {
  /** Oldest first. */
  commits: GitCommit[];
  /** The commit the diffs start from: `from` with `straight`, else the merge base; null when none. */
  base: string | null;
  diffs: FileDiff[];
  overflow: boolean;
  generated: Set<string>;
}
/** Comparisons by (ids, limits), bounded by an estimate of their memory in bytes. */
const COMPARISONS = new WeightedLruCache<string, GitComparison>(64 * 1024 * 1024, (c) => {
  let bytes = 1000;
  for (const diff of c.diffs)
    bytes += 300 + 2 * (diff.diff.length + diff.oldPath.length + diff.newPath.length);
  for (const commit of c.commits) bytes += 600 + 2 * commit.message.length;
  return bytes;
});

const COMPARING = new Map<string, Promise<GitComparison>>();

/** A commit id, or a range of two (`a..b`, `a...b`). */
const COMMIT_RANGE = /^([0-9a-f]{40}|[0-9a-f]{64})(\.\.\.?([0-9a-f]{40}|[0-9a-f]{64}))?$/;
/** The ids of a walk as far as it was read; `complete` when git had no more. */
interface Walk {
  ids: string[];
  complete: boolean;
}
/** How far a walk goes when it goes on, at least: five pages of 20 for one process. */
const WALK_CHUNK = 100;
/** Walks by (tips, options), bounded by their ids' memory (about 100 bytes each). */
const WALKS = new WeightedLruCache<string, Walk>(32 * 1024 * 1024, (walk) => 200 + 100 * walk.ids.length);
const WALKING = new Map<string, Promise<Walk>>();

/** Answers that never change, shared by every repository (a commit id names the same history anywhere). */
const LAST_COMMITS = new LruCache<string, string | null>(50_000);
const COMMITTER_DATES = new LruCache<string, number>(50_000);

/** Blobs up to this size are read whole through the shared reader; larger ones stream from a process. */
const INLINE_BLOB_BYTES = 1024 * 1024;

/**
 * Reads objects and resolves revisions through the repository's long-lived `cat-file --batch-command`
 * process (object-batch.ts): a line on a pipe per read, not a process.
 */
class ObjectReader {
  constructor(private readonly dir: string) {}

  /** What each revision names; one git cannot resolve (or hold on one line) gives null. */
  async info(revisions: string[]): Promise<Array<GitObject | null>> {
    return Promise.all(
      revisions.map(async (revision) => {
        if (revision === '' || /[\n\r\0]/.test(revision) || revision.length > MAX_REVISION_LENGTH)
          return null;
        return (await objectBatches.ask(this.dir, revision, false))?.object ?? null;
      }),
    );
  }

  /** An object's bytes, when it is of `type`; otherwise fails as `git cat-file <type>` would. */
  async read(type: string, id: string): Promise<Buffer> {
    assertObjectId(id);
    const found = await objectBatches.ask(this.dir, id, true);
    if (!found || found.object.type !== type)
      throw new GitError(['cat-file', type, id], 128, `fatal: git cat-file ${id}: bad file`);
    return found.data!;
  }

  async stream(id: string, head: number): Promise<ProcessOutput> {
    assertObjectId(id);
    const info = await objectBatches.ask(this.dir, id, false);
    if (info && info.object.type === 'blob' && info.object.size <= INLINE_BLOB_BYTES) {
      const data = await this.read('blob', id);
      return { head: data.subarray(0, head), stream: Readable.from([data]) };
    }
    const child = spawnGit(['cat-file', 'blob', id], { gitDir: this.dir });
    child.stdin!.end();
    return streamProcess(child, head);
  }

  /** The commit a revision names, or null; option-like input is refused before git sees it. */
  async resolveCommit(revision: string): Promise<string | null> {
    if (!isPlainRevision(revision)) return null;
    const found = await objectBatches.ask(this.dir, `${revision}^{commit}`, false);
    return found?.object.type === 'commit' ? found.object.id : null;
  }

  /** A tree's entries, in git's order. */
  async treeEntries(
    id: string,
  ): Promise<Array<{ mode: string; type: TreeEntry['type']; id: string; name: string }>> {
    return parseTree(await this.read('tree', id), id.length / 2);
  }
}

/** git log's walk options and arguments: everything but paging. */
function walkArgs(query: LogQuery): string[] {
  const args: string[] = [];
  if (query.firstParent) args.push('--first-parent');
  if (query.topoOrder) args.push('--topo-order');
  if (query.reverse) args.push('--reverse');
  if (query.author !== undefined) args.push('--fixed-strings', `--author=${query.author}`);
  if (query.since !== undefined) args.push(`--since=@${query.since}`);
  if (query.until !== undefined) args.push(`--until=@${query.until}`);
  if (query.all) args.push('--all');
  args.push('--end-of-options', ...(query.all ? [] : (query.revisions ?? [])), '--');
  args.push(...(query.paths ?? []).map(literal));
  return args;
}

/** Digests of ref-store snapshots, kept while the snapshot is. */
const REFS_DIGESTS = new WeakMap<object, string>();
function refsDigest(refs: StoredRef[]): string {
  let digest = REFS_DIGESTS.get(refs);
  if (digest === undefined) REFS_DIGESTS.set(refs, (digest = digestRefs(refs)));
  return digest;
}

/** Opens the repository at `dir` for one request. */
/** An empty bare repository at `dir` whose HEAD names `initialBranch`. */
export async function initBareRepository(dir: string, initialBranch: string): Promise<void> {
  await git(['init', '--bare', '--quiet', `--initial-branch=${initialBranch}`, dir]);
}

export function openGitRepository(dir: string): GitRepository {
  return new GitRepository(dir);
}

export class GitRepository {
  private readonly reader: ObjectReader;

  constructor(readonly dir: string) {
    this.reader = new ObjectReader(dir);
  }

  // ---- objects ----

  /** Objects by revision (`<commit>:<path>` included), in one call. */
  objects(revisions: string[]): Promise<Array<GitObject | null>> {
    return this.reader.info(revisions);
  }

  async object(revision: string): Promise<GitObject | null> {
    // `<rev>:./path` and `<rev>:../path` are relative to a working tree, which a bare repository lacks:
    // git's batch reader dies on them. No tree entry is named `.` or `..`, so there is no such object.
    if (RELATIVE_TREE_PATH.test(revision)) return null;
    if (!FIXED_REVISION.test(revision)) return (await this.reader.info([revision]))[0];
    const key = `${this.dir}\0${revision}`;
    const cached = FIXED_OBJECTS.get(key);
    if (cached) return cached;
    const [found] = await this.reader.info([revision]);
    if (found) FIXED_OBJECTS.set(key, found);
    return found;
  }

  readBlob(id: string): Promise<Buffer> {
    return this.reader.read('blob', id);
  }

  /** The blob's bytes as a stream, once its first `head` bytes (or all of it) are there. */
  streamBlob(id: string, head: number): Promise<ProcessOutput> {
    return this.reader.stream(id, head);
  }

  /** Reads a blob through without holding it: its SHA-256, and whether its first `probe` bytes hold a NUL. */
  async scanBlob(id: string, probe: number): Promise<{ sha256: string; binary: boolean }> {
    const { stream } = await this.reader.stream(id, 0);
    const hash = crypto.createHash('sha256');
    let probed = 0;
    let binary = false;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      hash.update(chunk);
      if (probed < probe) {
        if (chunk.subarray(0, probe - probed).includes(0)) binary = true;
        probed += chunk.length;
      }
    }
    return { sha256: hash.digest('hex'), binary };
  }

  /**
   * A blob of `size` bytes to send, with what its headers need: read once when small enough to hold,
   * otherwise scanned through and then streamed, never held whole.
   */
  async blobToSend(
    id: string,
    size: number,
    probe: number,
  ): Promise<{ sha256: string; binary: boolean; stream: Readable }> {
    if (size > INLINE_BLOB_BYTES) {
      const { sha256, binary } = await this.scanBlob(id, probe);
      return { sha256, binary, stream: (await this.reader.stream(id, 0)).stream };
    }
    const data = await this.reader.read('blob', id);
    return {
      sha256: crypto.createHash('sha256').update(data).digest('hex'),
      binary: data.subarray(0, probe).includes(0),
      stream: Readable.from([data]),
    };
  }

  /** The raw tag object, for checking a signature over the bytes it signs. */
  readTagObject(id: string): Promise<Buffer> {
    return this.reader.read('tag', id);
  }

  // ---- revisions ----

  /** The commit a revision (branch, tag, sha, `main~2`) names, or null. */
  resolveCommit(revision: string): Promise<string | null> {
    return this.reader.resolveCommit(revision);
  }

  /** `git merge-base` of the given commits; null when they share no history. */
  async mergeBase(commits: string[]): Promise<string | null> {
    commits.forEach(assertObjectId);
    // Commit ids fix their histories, so the answer is kept for good. Only two commits commute.
    const key = (commits.length === 2 ? [...commits].sort() : commits).join(' ');
    return remembered(MERGE_BASES, key, async () => {
      const result = await git(['merge-base', '--end-of-options', ...commits], {
        gitDir: this.dir,
        okCodes: [1],
      });
      return result.code === 0 ? result.stdout.toString('utf8').trim() : null;
    });
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    assertObjectId(ancestor);
    assertObjectId(descendant);
    return remembered(ANCESTRY, `${ancestor} ${descendant}`, async () => {
      // A commit on top of the other (an API write, most pushes) needs no walk: its object says so.
      if (ancestor === descendant || (await this.parentsOf(descendant)).includes(ancestor)) return true;
      const result = await git(['merge-base', '--is-ancestor', '--end-of-options', ancestor, descendant], {
        gitDir: this.dir,
        okCodes: [1],
      });
      return result.code === 0;
    });
  }

  /** A commit's parents from its object, through the shared reader; none for what is not a commit. */
  private async parentsOf(id: string): Promise<string[]> {
    const data = await this.reader.read('commit', id).catch(() => null);
    if (!data) return [];
    return [...commitHeaders(data).matchAll(/^parent ([0-9a-f]+)$/gm)].map((match) => match[1]);
  }

  // ---- refs ----

  /** Every ref and the object it names, sorted by name. */
  refs(): Promise<RefEntry[]> {
    return readRefs(this.dir);
  }

  /** A digest of every ref and its target; see RepositoryState.refs. */
  async refsDigest(): Promise<string> {
    return digestRefs(await readRefs(this.dir));
  }

  async isEmpty(): Promise<boolean> {
    return (await readRefs(this.dir)).length === 0;
  }

  /**
   * Branches whose head is a commit: all of them, or `prefix` and the branches below it (for-each-ref's
   * pattern semantics, never revision syntax).
   */
  async branches(prefix = ''): Promise<BranchRef[]> {
    const pattern = `${HEADS}${prefix}`;
    const heads = (await readRefs(this.dir)).filter(
      ({ ref }) =>
        ref.startsWith(HEADS) &&
        (prefix === '' || ref === pattern || ref.startsWith(pattern.endsWith('/') ? pattern : `${pattern}/`)),
    );
    const dates = await Promise.all(heads.map(({ sha }) => this.committerDate(sha)));
    const branches: BranchRef[] = [];
    heads.forEach(({ ref, sha }, i) => {
      if (dates[i] !== null) branches.push({ name: ref.slice(HEADS.length), sha, date: dates[i]! });
    });
    return branches;
  }

  /** A commit's committer date in seconds, or null when the object is not a commit. Cached: commits never change. */
  private async committerDate(sha: string): Promise<number | null> {
    const cached = COMMITTER_DATES.get(sha);
    if (cached !== undefined) return cached;
    const found = await objectBatches.ask(this.dir, sha, true);
    if (!found || found.object.type !== 'commit') return null;
    const date = Number(/^committer .* (-?\d+) [+-]\d{4}$/m.exec(commitHeaders(found.data!))?.[1] ?? 0);
    COMMITTER_DATES.set(sha, date);
    return date;
  }

  /** One branch by its exact name; for-each-ref never reads the name as revision syntax. */
  async branch(name: string): Promise<BranchRef | null> {
    // A name git could not store is no branch: no process for it.
    if (!isValidRefName(`${HEADS}${name}`)) return null;
    return (await this.branches(name)).find((ref) => ref.name === name) ?? null;
  }

  /** Names of the branches that contain `commit`, in name order (GitLab's `branch_names_contains`). */
  async branchNamesContaining(commit: string): Promise<string[]> {
    assertObjectId(commit);
    const output = await gitText(['for-each-ref', `--contains=${commit}`, '--format=%(refname)', HEADS], {
      gitDir: this.dir,
    });
    return output
      .split('\n')
      .filter((ref) => ref.startsWith(HEADS))
      .map((ref) => ref.slice(HEADS.length));
  }

  /** Branches whose head `commit` contains. */
  async mergedBranches(commit: string): Promise<RefEntry[]> {
    assertObjectId(commit);
    // The answer holds while the ref store reads the same: kept per snapshot, like sorted tags.
    const refs = await readRefs(this.dir);
    let byCommit = MERGED_BRANCHES.get(refs);
    if (!byCommit) MERGED_BRANCHES.set(refs, (byCommit = new Map()));
    const known = byCommit.get(commit);
    if (known) return known;
    const output = await gitText(
      ['for-each-ref', `--merged=${commit}`, '--format=%(refname)%00%(objectname)', HEADS],
      { gitDir: this.dir },
    );
    const merged = output
      .split('\n')
      .map((line) => line.split('\x00'))
      .filter(([ref]) => ref?.startsWith(HEADS))
      .map(([ref, sha]) => ({ ref, sha }));
    byCommit.set(commit, merged);
    return merged;
  }

  /**
   * Every tag name, sorted; ties keep ascending name order. Sorted lists are kept for as long as the
   * ref store reads the same (the snapshot is the key), so a page does not sort every tag again.
   */
  async tagNames(order: TagOrder, descending: boolean): Promise<string[]> {
    const refs = await readRefs(this.dir);
    let sorted = SORTED_TAGS.get(refs);
    if (!sorted) SORTED_TAGS.set(refs, (sorted = new Map()));
    const key = `${order}:${descending}`;
    let names = sorted.get(key);
    if (!names) {
      names =
        order === 'name'
          ? refs.filter(({ ref }) => ref.startsWith(TAGS)).map(({ ref }) => ref.slice(TAGS.length))
          : await sortedTagNames(this.dir, order, descending);
      if (order === 'name' && descending) names.reverse();
      sorted.set(key, names);
    }
    return names;
  }

  /**
   * The named tags; names that are not tags are missing from the map. Read from the ref store and the
   * shared object reader: no process, and the cost is the page's, not the repository's tag count.
   */
  async tags(names: string[]): Promise<Map<string, GitTag>> {
    const tags = new Map<string, GitTag>();
    if (names.length === 0) return tags;
    const index = tagIndex(await readRefs(this.dir));
    await Promise.all(
      names.map(async (name) => {
        const target = index.get(name);
        if (!target) return;
        const [object] = await this.reader.info([target]);
        if (!object) return;
        if (object.type !== 'tag') {
          tags.set(name, tagFromObject(name, target, object.type, null, null));
          return;
        }
        const parsed = parseTagObject(await this.reader.read('tag', target));
        const commitId =
          parsed.type === 'commit'
            ? parsed.object
            : parsed.type === 'tag'
              ? await this.reader.resolveCommit(target)
              : null;
        tags.set(name, tagFromObject(name, target, 'tag', parsed, commitId));
      }),
    );
    return tags;
  }

  /** Points HEAD (what a clone checks out) at a branch. */
  async setHead(branch: string): Promise<void> {
    await git(['symbolic-ref', 'HEAD', `${HEADS}${branch}`], { gitDir: this.dir });
  }

  /** Moves one ref to `newSha` from `oldSha` (null: it must not exist yet); throws GitError otherwise. */
  async updateRef(ref: string, newSha: string, oldSha: string | null): Promise<void> {
    await git(['update-ref', ref, newSha, oldSha ?? ''], { gitDir: this.dir });
  }

  /**
   * Applies ref changes atomically, each against its expected old value. False when git refused the
   * transaction (a ref moved meanwhile). The pre-receive checks are RepositoriesService's, not this method's.
   */
  async applyRefUpdates(changes: RefUpdate[]): Promise<boolean> {
    const script = changes
      .map((c) =>
        c.newSha === ZERO_SHA ? `delete ${c.ref} ${c.oldSha}` : `update ${c.ref} ${c.newSha} ${c.oldSha}`,
      )
      .join('\n');
    if (/[\r\0]/.test(script)) return false;
    try {
      await git(['update-ref', '--stdin'], {
        gitDir: this.dir,
        input: `start\n${script}\nprepare\ncommit\n`,
      });
      return true;
    } catch (err) {
      if (err instanceof GitError) return false;
      throw err;
    }
  }

  /**
   * Points `refs/merge-requests/<iid>/head` at `sha` (null removes it), as GitLab keeps it for every merge
   * request. Not a push: these refs are the server's own, hidden from pushes (see smart-protocol.ts).
   */
  async setMergeRequestRef(iid: number, sha: string | null): Promise<void> {
    if (!Number.isSafeInteger(iid) || iid < 1) throw new Error(`not a merge request iid: ${iid}`);
    const ref = `refs/merge-requests/${iid}/head`;
    if (sha !== null) assertObjectId(sha);
    // Every push to an open merge request's branches comes here; most leave the ref where it is.
    const current = (await readRefs(this.dir)).find((stored) => stored.ref === ref)?.sha ?? null;
    if (current === sha) return;
    if (sha === null) await git(['update-ref', '-d', ref], { gitDir: this.dir });
    else await git(['update-ref', ref, sha], { gitDir: this.dir });
  }

  /** `refs/merge-requests/<iid>/merge` (what merging would make) with its parents; null when absent. */
  async mergeRequestMergeRef(iid: number): Promise<{ sha: string; parents: string[] } | null> {
    const sha = await this.resolveCommit(`refs/merge-requests/${iid}/merge`);
    if (!sha) return null;
    const [commit] = await this.log({ revisions: [sha], maxCount: 1 });
    return commit ? { sha, parents: commit.parentIds } : null;
  }

  async setMergeRequestMergeRef(iid: number, sha: string): Promise<void> {
    if (!Number.isSafeInteger(iid) || iid < 1) throw new Error(`not a merge request iid: ${iid}`);
    assertObjectId(sha);
    await git(['update-ref', `refs/merge-requests/${iid}/merge`, sha], { gitDir: this.dir });
  }

  /**
   * Brings commit `sha` and its history from another repository of the fork network (a merge request's
   * source project) into this one, as GitLab fetches a fork's source branch into the target. Objects
   * already here (or borrowed through alternates) are not copied. The commit is asked for by id, so a
   * branch moving meanwhile cannot hand over another head.
   */
  async fetchCommit(sourceDir: string, sha: string): Promise<void> {
    assertObjectId(sha);
    if ((await this.resolveCommit(sha)) === sha) return;
    await git(
      ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--no-auto-gc', '--', sourceDir, sha],
      {
        gitDir: this.dir,
        // Configuration in the environment reaches the local upload-pack too: it serves a commit that no ref
        // advertises by name.
        env: {
          GIT_CONFIG_COUNT: '1',
          GIT_CONFIG_KEY_0: 'uploadpack.allowAnySHA1InWant',
          GIT_CONFIG_VALUE_0: 'true',
        },
      },
    );
  }

  /**
   * Whether `source` merges into `target` cleanly, without a worktree (`git merge-tree --write-tree`).
   * `error` says why not: the conflicting paths, or unrelated histories.
   */
  async mergeConflicts(
    target: string,
    source: string,
  ): Promise<{ conflicts: boolean; error: string | null }> {
    assertObjectId(target);
    assertObjectId(source);
    const result = await git(
      ['merge-tree', '--write-tree', '--no-messages', '--name-only', '--end-of-options', target, source],
      { gitDir: this.dir, okCodes: [1, 128] },
    );
    if (result.code === 0) return { conflicts: false, error: null };
    if (result.code === 128) return { conflicts: true, error: result.stderr.trim().split('\n')[0] ?? null };
    // The first line is the tree; the conflicting paths follow.
    const paths = result.stdout.toString('utf8').split('\n').slice(1).filter(Boolean);
    return { conflicts: true, error: `Conflicts in ${[...new Set(paths)].join(', ')}` };
  }

  /** git's stable patch ID of the diff from `base` to `head`; null when they do not differ. */
  async patchId(base: string, head: string): Promise<string | null> {
    assertObjectId(base);
    assertObjectId(head);
    const diff = await git(
      ['diff-tree', '-p', '--no-color', '--no-ext-diff', '--end-of-options', base, head],
      {
        gitDir: this.dir,
      },
    );
    if (diff.stdout.length === 0) return null;
    // patch-id reads a commit header before the patch; any id will do, only the first field is kept.
    const input = Buffer.concat([Buffer.from(`commit ${head}\n`), diff.stdout]);
    const output = await gitText(['patch-id', '--stable'], { gitDir: this.dir, input });
    return output.split(' ')[0] || null;
  }

  /** How many commits `head` has that `base` has not (all of `head`'s when `base` is null). */
  async countCommits(base: string | null, head: string): Promise<number> {
    assertObjectId(head);
    if (base) assertObjectId(base);
    const range = base ? [head, `^${base}`] : [head];
    return remembered(COMMIT_COUNTS, range.join(' '), async () =>
      Number(await gitText(['rev-list', '--count', '--end-of-options', ...range], { gitDir: this.dir })),
    );
  }

  // ---- history ----

  log(query: LogQuery): Promise<GitCommit[]> {
    // git reads --skip as a C int and wraps beyond it; no history is that long, so such a page is empty.
    if ((query.skip ?? 0) > 2147483647) return Promise.resolve([]);
    const args: string[] = [];
    if (query.skip) args.push('--skip', String(query.skip));
    if (query.maxCount !== undefined) args.push('-n', String(query.maxCount));
    return logCommits(this.dir, [...args, ...walkArgs(query)]);
  }

  /**
   * `log(query)` for revisions that are commit ids or ranges of them (`a..b`, `a...b`), or `all`, without
   * `author`; other queries go to `log` as they are. A walk's order depends only on those ids (for `all`,
   * on every ref and HEAD) and the options, so the ids it walked are kept and pages are cut from them: a
   * page read before costs no process, and a moved branch is a new key, never a stale walk. Details come
   * from the commit cache.
   */
  async history(query: LogQuery): Promise<GitCommit[]> {
    const revisions = query.revisions ?? [];
    // An author may match through the mailmap (HEAD:.mailmap in a bare repository), which no commit id
    // fixes: such walks are not kept.
    if (
      query.reverse ||
      query.author !== undefined ||
      (!query.all && !revisions.every((r) => COMMIT_RANGE.test(r)))
    )
      return this.log(query);
    const skip = query.skip ?? 0;
    const end = query.maxCount === undefined ? Infinity : skip + query.maxCount;
    let tips = revisions.join(' ');
    if (query.all) {
      // --all walks every ref and HEAD.
      const refs = await readRefs(this.dir);
      tips = `all ${refsDigest(refs)} ${(await this.resolveCommit('HEAD')) ?? '-'}`;
    }
    const key = [
      this.dir,
      tips,
      query.firstParent ? 1 : 0,
      query.topoOrder ? 1 : 0,
      query.since ?? '',
      query.until ?? '',
      ...(query.paths ?? []),
    ].join('\0');
    let walk = WALKS.get(key);
    while (!walk || (!walk.complete && walk.ids.length < end)) {
      // Concurrent requests for one walk share its process.
      let pending = WALKING.get(key);
      if (!pending) {
        // One `git log` reads on from where the walk stopped: at first what is asked, as it always did; then
        // past it (twice as far each time), so that the next pages are there too. Details land in the
        // commit cache.
        const known = walk?.ids ?? [];
        const count = walk ? Math.max(end, WALK_CHUNK, 2 * known.length) : end;
        pending = this.log({
          ...query,
          skip: known.length,
          maxCount: count === Infinity ? undefined : count - known.length,
        })
          .then((commits) => {
            for (const commit of commits) COMMITS.set(commit.id, commit);
            const ids = [...known, ...commits.map((commit) => commit.id)];
            const next = { ids, complete: ids.length < count };
            WALKS.set(key, next);
            return next;
          })
          .finally(() => WALKING.delete(key));
        WALKING.set(key, pending);
      }
      walk = await pending;
    }
    const ids = walk.ids.slice(skip, end);
    const commits = await this.commits(ids);
    return ids.map((id) => commits.get(id)!);
  }

  /** One commit by any revision that names it; null when it does not resolve to a commit. */
  async commit(revision: string): Promise<GitCommit | null> {
    const sha = await this.resolveCommit(revision);
    if (!sha) return null;
    return (await this.commits([sha])).get(sha) ?? null;
  }

  /** Many commits by id, in one call for those not read before. */
  async commits(ids: string[]): Promise<Map<string, GitCommit>> {
    return readThrough(COMMITS, ids, (missing) => readCommits(this.dir, missing));
  }

  /** Stats by commit id: a commit's diff against its first parent never changes, so they are kept. */
  async commitStats(ids: string[]): Promise<Map<string, CommitStats>> {
    return readThrough(COMMIT_STATS, ids, (missing) => commitStats(this.dir, missing));
  }

  /**
   * The last commit up to `revision` that changed `path`, or null. For a commit id the answer never
   * changes, so it is cached: a history walk happens once per (commit, path).
   */
  async lastCommitForPath(revision: string, path: string): Promise<string | null> {
    if (!isPlainRevision(revision)) return null;
    const key = OBJECT_ID.test(revision) ? `${revision}\0${path}` : undefined;
    const cached = key === undefined ? undefined : LAST_COMMITS.get(key);
    if (cached !== undefined) return cached;
    const id =
      (await gitText(['log', '-1', '--format=%H', '--end-of-options', revision, '--', literal(path)], {
        gitDir: this.dir,
      })) || null;
    if (key !== undefined) LAST_COMMITS.set(key, id);
    return id;
  }

  /** Author names and emails of up to `max` non-merge commits from `commit`, newest first. */
  async authors(commit: string, max: number): Promise<Array<{ name: string; email: string }>> {
    assertObjectId(commit);
    const { stdout } = await git(
      [
        'log',
        '--no-merges',
        `--max-count=${max}`,
        '--format=%an%x00%ae%x00',
        '--end-of-options',
        commit,
        '--',
      ],
      { gitDir: this.dir },
    );
    const fields = stdout.toString('utf8').split('\0');
    const authors: Array<{ name: string; email: string }> = [];
    for (let i = 0; i + 1 < fields.length; i += 2)
      authors.push({ name: fields[i].replace(/^\n/, ''), email: fields[i + 1] });
    return authors;
  }

  /** The file's lines in runs last changed by one commit; null when the range is outside the file. */
  async blame(
    commit: string,
    path: string,
    range?: { start: number; end: number },
  ): Promise<BlameRange[] | null> {
    // blame takes no --end-of-options; the commit is an id and the path comes after `--`.
    assertObjectId(commit);
    const result = await git(
      ['blame', '--porcelain', ...(range ? ['-L', `${range.start},${range.end}`] : []), commit, '--', path],
      { gitDir: this.dir, okCodes: [128] },
    );
    if (result.code !== 0) return null;
    const ranges: BlameRange[] = [];
    let current = '';
    for (const line of result.stdout.toString('utf8').split('\n')) {
      if (line.startsWith('\t')) {
        const last = ranges[ranges.length - 1];
        if (last?.sha === current) last.lines.push(line.slice(1));
        else ranges.push({ sha: current, lines: [line.slice(1)] });
      } else {
        const header = /^([0-9a-f]{40,64}) \d+ \d+/.exec(line);
        if (header) current = header[1];
      }
    }
    return ranges;
  }

  // ---- trees ----

  /**
   * The entries of tree `tree` (an id), paths relative to `base`: directories, files, then submodules.
   * Kept by tree id (see tree-listing.ts): the array is shared, never to be mutated.
   */
  tree(tree: string, base: string, recursive: boolean): Promise<readonly TreeEntry[]> {
    assertObjectId(tree);
    return listTree((id) => this.reader.read('tree', id), tree, base, recursive);
  }

  /** The entry `name` in the directory `dir` (`''` for the root) of `commit`, with its size; or null. */
  async treeEntry(
    commit: string,
    dir: string,
    name: string,
  ): Promise<{ mode: string; type: string; sha: string; size: number } | null> {
    assertObjectId(commit);
    const tree = await this.object(dir ? `${commit}:${dir}` : `${commit}^{tree}`);
    if (!tree || tree.type !== 'tree') return null;
    // The directory's kept listing: a file read again at the same commit reads no tree.
    const listing = await this.tree(tree.id, dir, false);
    const entry = listing[positionOf(listing, dir ? `${dir}/${name}` : name)];
    if (!entry) return null;
    // ls-tree -l gives no size for trees and submodules.
    const size = entry.type === 'blob' ? ((await this.object(entry.id))?.size ?? NaN) : NaN;
    return { mode: entry.mode, type: entry.type, sha: entry.id, size };
  }

  // ---- diffs and archives ----

  /** The diffs from `base` (a commit or EMPTY_TREE) to `head`, within `limits`. */
  diffs(base: string, head: string, limits: DiffLimits = DEFAULT_DIFF_LIMITS): Promise<DiffResult> {
    assertObjectId(base);
    assertObjectId(head);
    return readDiffs(this.dir, base, head, limits);
  }

  /**
   * What compare shows of two different commits: the commits `to` has that `from` has not, oldest first;
   * the diffs to `to` from their merge base (from `from` when `straight`, from the empty tree when they
   * share no history) within `limits`, and which of their paths are generated. It depends only on the
   * ids, so it is kept, bounded by size.
   */
  async compare(
    from: string,
    to: string,
    straight: boolean,
    limits: DiffLimits = DEFAULT_DIFF_LIMITS,
  ): Promise<GitComparison> {
    assertObjectId(from);
    assertObjectId(to);
    const key = [
      this.dir,
      from,
      to,
      straight,
      limits.maxFiles,
      limits.maxLines,
      limits.maxBytes,
      limits.maxPatchBytes,
    ].join(' ');
    const cached = COMPARISONS.get(key);
    if (cached) return cached;
    // Concurrent requests for one comparison share its processes.
    let pending = COMPARING.get(key);
    if (!pending) {
      pending = this.compareOnce(from, to, straight, limits)
        .then((comparison) => {
          COMPARISONS.set(key, comparison);
          return comparison;
        })
        .finally(() => COMPARING.delete(key));
      COMPARING.set(key, pending);
    }
    return pending;
  }

  private async compareOnce(
    from: string,
    to: string,
    straight: boolean,
    limits: DiffLimits,
  ): Promise<GitComparison> {
    const pair = [from, to].sort().join(' ');
    const range = ['--end-of-options', `${from}..${to}`, '--'];
    let mergeBase = MERGE_BASES.get(pair);
    let walked: { commits: GitCommit[]; boundary: string[] };
    let result: DiffResult;
    if (straight || mergeBase !== undefined) {
      const base = straight ? from : (mergeBase ?? EMPTY_TREE);
      [walked, result] = await Promise.all([logWithBoundary(this.dir, range), this.diffs(base, to, limits)]);
    } else {
      walked = await logWithBoundary(this.dir, range);
      // The walk answers when one side contains the other: `from` is on its boundary when it is an
      // ancestor of `to`, and nothing is walked when `to` is an ancestor of `from`. Otherwise every
      // common ancestor lies behind a boundary commit (the walk leaves `to`'s own commits through one):
      // with one, it is the merge base; with none, the histories are unrelated.
      if (walked.boundary.includes(from)) mergeBase = from;
      else if (walked.commits.length === 0) mergeBase = to;
      else if (walked.boundary.length <= 1) mergeBase = walked.boundary[0] ?? null;
      else mergeBase = await this.mergeBase([from, to]);
      MERGE_BASES.set(pair, mergeBase);
      result = await this.diffs(mergeBase ?? EMPTY_TREE, to, limits);
    }
    for (const commit of walked.commits) COMMITS.set(commit.id, commit);
    const generated = await this.generatedPaths(
      to,
      result.diffs.map((diff) => diff.newPath),
    );
    const comparison: GitComparison = {
      commits: walked.commits.reverse(),
      base: straight ? from : (mergeBase ?? null),
      diffs: result.diffs,
      overflow: result.overflow,
      generated,
    };
    return comparison;
  }

  /** Which of `paths` are generated at `commit` (`.gitattributes`, else well-known names). */
  generatedPaths(commit: string, paths: string[]): Promise<Set<string>> {
    assertObjectId(commit);
    return generatedPaths(this.dir, commit, paths);
  }

  /** `git archive`, once its first bytes are there; rejects with ProcessFailed when git refuses. */
  archive(request: ArchiveRequest): Promise<{ stream: Readable }> {
    assertObjectId(request.commit);
    return startArchive(this.dir, request);
  }

  // ---- writes: objects only; refs move through RepositoriesService.updateRefs ----

  /** A commit of a tree holding one file, on top of `parent` (or none). */
  async commitOneFile(options: {
    path: string;
    content: string | Buffer;
    message: string;
    author: Signature;
    parent?: string;
  }): Promise<string> {
    const blob = await gitText(['hash-object', '-w', '--stdin'], {
      gitDir: this.dir,
      input: options.content,
    });
    const tree = await gitText(['mktree'], {
      gitDir: this.dir,
      input: `100644 blob ${blob}\t${options.path}\n`,
    });
    const env = {
      GIT_AUTHOR_NAME: options.author.name,
      GIT_AUTHOR_EMAIL: options.author.email,
      GIT_COMMITTER_NAME: options.author.name,
      GIT_COMMITTER_EMAIL: options.author.email,
    };
    const parents = options.parent ? ['-p', options.parent] : [];
    return gitText(['commit-tree', tree, ...parents, '-m', options.message], { gitDir: this.dir, env });
  }

  /** Writes the blobs, tree and commit for file actions on top of a parent; returns the commit's id. */
  buildCommit(options: BuildCommitOptions): Promise<string> {
    return buildCommit(this.dir, this.trees, options);
  }

  /** The builder reads the parent's trees through the shared reader. */
  private readonly trees: TreeSource = {
    treeOf: async (commit) => {
      const [tree] = await this.reader.info([`${commit}^{tree}`]);
      if (!tree) throw new GitError(['rev-parse', commit], 128, `fatal: not a valid object name ${commit}`);
      return tree.id;
    },
    readTree: (id) => this.reader.read('tree', id),
  };

  /** The tree of merging `source` into `target`, or null when they conflict. */
  mergedTree(target: string, source: string): Promise<string | null> {
    return mergedTree(this.dir, target, source);
  }

  /** Writes a commit of `tree` with the given parents and identities; returns its id. */
  writeCommit(options: WriteCommitOptions): Promise<string> {
    return writeCommit(this.dir, options);
  }

  treeOf(commit: string): Promise<string> {
    return treeOf(this.dir, commit);
  }

  /** Replays `head`'s own commits onto `onto` (see merges.ts). */
  rebase(onto: string, head: string, committer: Signature): Promise<RebaseResult> {
    return rebase(this.dir, onto, head, committer);
  }

  /** Writes a tag object (`mktag` checks it); returns its id. */
  async writeTag(content: string): Promise<string> {
    return gitText(['mktag'], { gitDir: this.dir, input: content });
  }

  // ---- what projects show of the repository ----

  state(defaultBranch: string | null): Promise<RepositoryState> {
    return readRepositoryState(this.dir, defaultBranch, {
      rootNames: async (commit) => {
        const tree = await this.object(`${commit}^{tree}`);
        return tree ? (await this.reader.treeEntries(tree.id)).map((entry) => entry.name) : [];
      },
      commitCount: (commit) => this.countCommits(null, commit),
    });
  }

  /** The license file at the root of `branch`, identified; null when there is none. */
  license(branch: string | null): Promise<DetectedLicense | null> {
    return detectLicense(this.dir, branch);
  }
}

export type {
  ArchiveRequest,
  TreeEntry,
  CommitStats,
  DetectedLicense,
  DiffLimits,
  DiffResult,
  GitCommit,
  GitTag,
  TagOrder,
};
