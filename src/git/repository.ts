/**
 * One project's repository as the families read and write it: the only way to git outside src/git/.
 * A GitRepository is opened per request (RepositoriesService.open) from the repository's disk path.
 *
 * Rules every method keeps, so that no family has to:
 * - user-supplied revisions go after `--end-of-options` (or through stdin) and paths after `--` as
 *   literal pathspecs, so no input is ever read as an option;
 * - object reads (`objects`, `readBlob`, `streamBlob`, `readTagObject`) and revision resolution go
 *   through `ObjectReader`, the one place where long-lived `cat-file --batch` processes can replace
 *   one spawn per read without any caller changing.
 */
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import { startArchive, type ArchiveRequest } from './archive.js';
import { buildCommit, type BuildCommitOptions } from './commit-builder.js';
import { commitStats, type CommitStats } from './commit-stats.js';
import { logCommits, readCommits, type GitCommit } from './commits.js';
import { DEFAULT_DIFF_LIMITS, generatedPaths, readDiffs, type DiffLimits, type DiffResult } from './diffs.js';
import { git, GitError, gitText, spawnGit } from './git.js';
import { detectLicense, type DetectedLicense } from './license.js';
import { streamProcess, type ProcessOutput } from './process-stream.js';
import { digestRefs, listRefs, readRepositoryState, type RepositoryState } from './repository-state.js';
import type { Signature } from './storage.js';
import { readTagObject, readTags, sortedTagNames, type GitTag, type TagOrder } from './tags.js';

export interface GitObject {
  id: string;
  type: string;
  size: number;
}

export interface TreeEntry {
  id: string;
  name: string;
  type: 'tree' | 'blob' | 'commit';
  path: string;
  mode: string;
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
const BRANCH_FORMAT = '--format=%(refname)%00%(objectname)%00%(objecttype)%00%(committerdate:unix)';

/** A revision that can be given to git at all: not empty, not option-like, on one line. */
export const isPlainRevision = (revision: string) =>
  revision !== '' && !revision.startsWith('-') && !/[\n\r\0]/.test(revision);

const literal = (path: string) => `:(literal)${path}`;

function assertObjectId(id: string): void {
  // Object ids come from git itself; anything else here is a bug, never user input to pass on.
  if (!OBJECT_ID.test(id)) throw new Error(`not an object id: ${JSON.stringify(id)}`);
}

/**
 * Reads objects and resolves revisions. Today one short-lived `git cat-file` per call; this is the seam
 * where a long-lived `cat-file --batch-command` process per repository goes.
 */
class ObjectReader {
  constructor(private readonly dir: string) {}

  /** `cat-file --batch-check` over stdin: a revision git cannot resolve (or hold on one line) gives null. */
  async info(revisions: string[]): Promise<Array<GitObject | null>> {
    if (revisions.length === 0) return [];
    const asked = revisions.map((revision) => (/[\n\r\0]/.test(revision) ? '' : revision));
    const { stdout } = await git(['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], {
      gitDir: this.dir,
      // A blank line stands for an impossible revision and answers "missing" in its place.
      input: `${asked.map((revision) => revision || ' ').join('\n')}\n`,
    });
    const lines = stdout.toString('utf8').split('\n');
    return asked.map((revision, i) => {
      const match = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(lines[i] ?? '');
      if (!revision || !match) return null;
      return { id: match[1], type: match[2], size: Number(match[3]) };
    });
  }

  async read(type: 'blob' | 'tag', id: string): Promise<Buffer> {
    assertObjectId(id);
    return (await git(['cat-file', type, id], { gitDir: this.dir })).stdout;
  }

  stream(id: string, head: number): Promise<ProcessOutput> {
    assertObjectId(id);
    const child = spawnGit(['cat-file', 'blob', id], { gitDir: this.dir });
    child.stdin!.end();
    return streamProcess(child, head);
  }

  /** The commit a revision names, or null; option-like input is refused before git sees it. */
  async resolveCommit(revision: string): Promise<string | null> {
    if (!isPlainRevision(revision)) return null;
    const result = await git(
      ['rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`],
      {
        gitDir: this.dir,
        okCodes: [1, 128],
      },
    );
    return result.code === 0 ? result.stdout.toString('utf8').trim() : null;
  }
}

/** GitLab's check of a new ref name (`refs/heads/x`, `refs/tags/x`): git's own rules. */
export async function isValidRefName(ref: string): Promise<boolean> {
  if (/[\n\r\0]/.test(ref)) return false;
  return (await git(['check-ref-format', ref], { okCodes: [1] })).code === 0;
}

/** Opens the repository at `dir` for one request. */
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
    return (await this.reader.info([revision]))[0];
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

  /** The raw tag object, for checking a signature over the bytes it signs. */
  readTagObject(id: string): Promise<Buffer> {
    assertObjectId(id);
    return readTagObject(this.dir, id);
  }

  // ---- revisions ----

  /** The commit a revision (branch, tag, sha, `main~2`) names, or null. */
  resolveCommit(revision: string): Promise<string | null> {
    return this.reader.resolveCommit(revision);
  }

  /** `git merge-base` of the given commits; null when they share no history. */
  async mergeBase(commits: string[]): Promise<string | null> {
    commits.forEach(assertObjectId);
    const result = await git(['merge-base', '--end-of-options', ...commits], {
      gitDir: this.dir,
      okCodes: [1],
    });
    return result.code === 0 ? result.stdout.toString('utf8').trim() : null;
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    assertObjectId(ancestor);
    assertObjectId(descendant);
    const result = await git(['merge-base', '--is-ancestor', '--end-of-options', ancestor, descendant], {
      gitDir: this.dir,
      okCodes: [1],
    });
    return result.code === 0;
  }

  // ---- refs ----

  /** Every ref and the object it names, sorted by name. */
  refs(): Promise<RefEntry[]> {
    return listRefs(this.dir);
  }

  /** A digest of every ref and its target; see RepositoryState.refs. */
  async refsDigest(): Promise<string> {
    return digestRefs(await listRefs(this.dir));
  }

  async isEmpty(): Promise<boolean> {
    return (await gitText(['for-each-ref', '--count=1', '--format=%(refname)'], { gitDir: this.dir })) === '';
  }

  /** Branches whose head is a commit, below `prefix` (a ref pattern, never revision syntax). */
  async branches(prefix = ''): Promise<BranchRef[]> {
    const { stdout } = await git(['for-each-ref', BRANCH_FORMAT, `${HEADS}${prefix}`], { gitDir: this.dir });
    const refs: BranchRef[] = [];
    for (const line of stdout.toString('utf8').split('\n')) {
      const [ref, sha, type, date] = line.split('\x00');
      if (!ref?.startsWith(HEADS) || type !== 'commit') continue;
      refs.push({ name: ref.slice(HEADS.length), sha, date: Number(date) });
    }
    return refs;
  }

  /** One branch by its exact name; for-each-ref never reads the name as revision syntax. */
  async branch(name: string): Promise<BranchRef | null> {
    if (name === '') return null;
    return (await this.branches(name)).find((ref) => ref.name === name) ?? null;
  }

  /** Branches whose head `commit` contains. */
  async mergedBranches(commit: string): Promise<RefEntry[]> {
    assertObjectId(commit);
    const output = await gitText(
      ['for-each-ref', `--merged=${commit}`, '--format=%(refname)%00%(objectname)', HEADS],
      { gitDir: this.dir },
    );
    return output
      .split('\n')
      .map((line) => line.split('\x00'))
      .filter(([ref]) => ref?.startsWith(HEADS))
      .map(([ref, sha]) => ({ ref, sha }));
  }

  /** Every tag name, sorted; ties keep ascending name order. */
  tagNames(order: TagOrder, descending: boolean): Promise<string[]> {
    return sortedTagNames(this.dir, order, descending);
  }

  /** The named tags, in one call; names that are not tags are missing from the map. */
  tags(names: string[]): Promise<Map<string, GitTag>> {
    return readTags(this.dir, names);
  }

  /** Points HEAD (what a clone checks out) at a branch. */
  async setHead(branch: string): Promise<void> {
    await git(['symbolic-ref', 'HEAD', `${HEADS}${branch}`], { gitDir: this.dir });
  }

  /**
   * Applies ref changes atomically, each against its expected old value. False when git refused the
   * transaction (a ref moved meanwhile). Push rules are RepositoriesService's, not this method's.
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

  // ---- history ----

  log(query: LogQuery): Promise<GitCommit[]> {
    const args: string[] = [];
    if (query.skip) args.push('--skip', String(query.skip));
    if (query.maxCount !== undefined) args.push('-n', String(query.maxCount));
    if (query.firstParent) args.push('--first-parent');
    if (query.topoOrder) args.push('--topo-order');
    if (query.reverse) args.push('--reverse');
    if (query.author !== undefined) args.push('--fixed-strings', `--author=${query.author}`);
    if (query.since !== undefined) args.push(`--since=@${query.since}`);
    if (query.until !== undefined) args.push(`--until=@${query.until}`);
    if (query.all) args.push('--all');
    args.push('--end-of-options', ...(query.all ? [] : (query.revisions ?? [])), '--');
    args.push(...(query.paths ?? []).map(literal));
    return logCommits(this.dir, args);
  }

  /** One commit by any revision that names it; null when it does not resolve to a commit. */
  async commit(revision: string): Promise<GitCommit | null> {
    const sha = await this.resolveCommit(revision);
    if (!sha) return null;
    const [commit] = await logCommits(this.dir, ['-n', '1', '--end-of-options', sha, '--']);
    return commit ?? null;
  }

  /** Many commits by id, in one call. */
  commits(ids: string[]): Promise<Map<string, GitCommit>> {
    ids.forEach(assertObjectId);
    return readCommits(this.dir, ids);
  }

  commitStats(ids: string[]): Promise<Map<string, CommitStats>> {
    ids.forEach(assertObjectId);
    return commitStats(this.dir, ids);
  }

  /** The last commit up to `revision` that changed `path`, or null. */
  async lastCommitForPath(revision: string, path: string): Promise<string | null> {
    if (!isPlainRevision(revision)) return null;
    const id = await gitText(
      ['log', '-1', '--format=%H', '--end-of-options', revision, '--', literal(path)],
      {
        gitDir: this.dir,
      },
    );
    return id || null;
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

  /** The entries of tree `tree` (an id), paths relative to `base`: directories, files, then submodules. */
  async tree(tree: string, base: string, recursive: boolean): Promise<TreeEntry[]> {
    assertObjectId(tree);
    const args = ['ls-tree', '-z', ...(recursive ? ['-r', '-t'] : []), '--end-of-options', tree];
    const { stdout } = await git(args, { gitDir: this.dir });
    const entries: TreeEntry[] = [];
    for (const record of stdout.toString('utf8').split('\0')) {
      const tab = record.indexOf('\t');
      if (tab === -1) continue;
      const [mode, type, id] = record.slice(0, tab).split(' ');
      const relative = record.slice(tab + 1);
      entries.push({
        id,
        name: relative.slice(relative.lastIndexOf('/') + 1),
        type: type as TreeEntry['type'],
        path: base ? `${base}/${relative}` : relative,
        mode,
      });
    }
    const rank = { tree: 0, blob: 1, commit: 2 } as const;
    // Array#sort is stable: git's order within each kind.
    return entries.sort((a, b) => rank[a.type] - rank[b.type]);
  }

  /** The entry `name` in the directory `dir` (`''` for the root) of `commit`, with its size; or null. */
  async treeEntry(
    commit: string,
    dir: string,
    name: string,
  ): Promise<{ mode: string; type: string; sha: string; size: number } | null> {
    assertObjectId(commit);
    const treeish = dir ? `${commit}:${dir}` : `${commit}^{tree}`;
    const listing = await git(['ls-tree', '-z', '-l', '--end-of-options', treeish], {
      gitDir: this.dir,
      okCodes: [128],
    });
    if (listing.code !== 0) return null;
    for (const record of listing.stdout.toString('utf8').split('\0')) {
      const match = /^(\d+) (\w+) ([0-9a-f]+) +(-|\d+)\t([\s\S]*)$/.exec(record);
      if (match && match[5] === name)
        return { mode: match[1], type: match[2], sha: match[3], size: Number(match[4]) };
    }
    return null;
  }

  // ---- diffs and archives ----

  /** The diffs from `base` (a commit or EMPTY_TREE) to `head`, within `limits`. */
  diffs(base: string, head: string, limits: DiffLimits = DEFAULT_DIFF_LIMITS): Promise<DiffResult> {
    assertObjectId(base);
    assertObjectId(head);
    return readDiffs(this.dir, base, head, limits);
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
    return buildCommit(this.dir, options);
  }

  /** Writes a tag object (`mktag` checks it); returns its id. */
  async writeTag(content: string): Promise<string> {
    return gitText(['mktag'], { gitDir: this.dir, input: content });
  }

  // ---- what projects show of the repository ----

  state(defaultBranch: string | null): Promise<RepositoryState> {
    return readRepositoryState(this.dir, defaultBranch);
  }

  /** The license file at the root of `branch`, identified; null when there is none. */
  license(branch: string | null): Promise<DetectedLicense | null> {
    return detectLicense(this.dir, branch);
  }
}

export type {
  ArchiveRequest,
  CommitStats,
  DetectedLicense,
  DiffLimits,
  DiffResult,
  GitCommit,
  GitTag,
  TagOrder,
};
