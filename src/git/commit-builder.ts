/**
 * Commits made without a work tree, as GitLab makes them for the API and the web editor: the parent's
 * tree is read through the shared object reader, only the directories on the changed paths are loaded
 * and rewritten, and three processes at most write the objects: one for all new blobs, one for all
 * changed trees, one for the commit. The work is proportional to the change, not to the repository.
 * No ref moves here; callers move the branch through RepositoriesService.updateRefs, so the pre-receive
 * checks apply as they do to `git push`.
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { GitCommit } from './commits.js';
import { git, GitError, gitText, repositoryGone, spawnGit, type GitProcess } from './git.js';
import { objectBatches } from './object-batch.js';
import type { Signature } from './storage.js';
import { parseTreeObject } from './tree-object.js';

export type FileActionKind = 'create' | 'update' | 'delete' | 'move' | 'chmod';

export interface FileAction {
  action: FileActionKind;
  filePath: string;
  /** `move` only: where the file was. */
  previousPath?: string;
  /** The new bytes. For `move`, undefined keeps the moved file's content; `create` makes an empty file. */
  content?: Buffer;
  /** `chmod`: set or clear the executable bit; `create` and `update`: the new file's mode, if given. */
  executeFilemode?: boolean;
}

/** A change the repository refuses; the message is GitLab's (Gitaly's) wording. */
export class CommitBuildError extends Error {}

export const BUILD_MESSAGES = {
  emptyPath: 'You must provide a file path',
  traversal: 'Path cannot include directory traversal',
  fileExists: 'A file with this name already exists',
  directoryExists: 'A directory with this name already exists',
  fileNotFound: "A file with this name doesn't exist",
  invalidPath: (p: string) => `invalid path: '${p}'`,
} as const;

const REGULAR = '100644';
const EXECUTABLE = '100755';
const SUBMODULE = '160000';

/**
 * A repository-relative path as Gitaly accepts it: leading slashes and `.` segments dropped, `..`
 * resolved but never above the root, no empty segments, and nothing git itself refuses (`.git`).
 */
export function normalizeActionPath(raw: string): string {
  if (raw.includes('//')) throw new CommitBuildError(BUILD_MESSAGES.invalidPath(raw));
  const segments: string[] = [];
  for (const segment of raw.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) throw new CommitBuildError(BUILD_MESSAGES.traversal);
      segments.pop();
    } else segments.push(segment);
  }
  if (segments.length === 0) throw new CommitBuildError(BUILD_MESSAGES.emptyPath);
  if (segments.some((s) => s.includes('\0') || isDotGit(s)))
    throw new CommitBuildError(BUILD_MESSAGES.invalidPath(raw));
  return segments.join('/');
}

/** Code points HFS+ ignores in names, so that `.g\u200cit` is `.git` there. */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/gu;

/**
 * A name git refuses in a tree because some file system takes it for `.git` (git's verify_path with
 * core.protectNTFS and core.protectHFS): case variants, NTFS's trailing dots and spaces, its short
 * name `git~1` and stream suffixes, and HFS+'s ignored code points.
 */
function isDotGit(segment: string): boolean {
  const lower = segment.toLowerCase();
  if (lower === 'git~1' || lower.replace(HFS_IGNORED, '') === '.git') return true;
  return /^\.git[. ]*(?::.*)?$/.test(lower);
}

const DIRECTORY = '40000';

interface Entry {
  mode: string;
  id: string;
}

/**
 * One directory of the tree being built. Names are kept as git stores them (bytes, held as latin1
 * strings), so that a rewritten directory keeps names that are not UTF-8 exactly.
 */
class Directory {
  readonly entries = new Map<string, Entry | Directory>();
  /** Whether it differs from the tree it was read from; only such directories are written. */
  changed: boolean;

  /** `id`: the tree it was read from; null for a directory the change makes. */
  constructor(readonly id: string | null) {
    this.changed = id === null;
  }
}

/** Where the builder reads the parent's trees: the repository's shared object reader. */
export interface TreeSource {
  treeOf(commit: string): Promise<string>;
  readTree(id: string): Promise<Buffer>;
}

/** A blob to write, referred to by its place in the list until it has an id. */
const pendingBlob = (index: number) => `pending:${index}`;

/** The parent's tree, loaded one directory at a time as the actions reach into it, with GitLab's checks. */
class Tree {
  readonly blobs: Buffer[] = [];

  private constructor(
    private readonly source: TreeSource,
    readonly root: Directory,
  ) {}

  static async of(source: TreeSource, parent: string | null): Promise<Tree> {
    const tree = new Tree(source, new Directory(parent ? await source.treeOf(parent) : null));
    if (tree.root.id) await tree.fill(tree.root, tree.root.id);
    return tree;
  }

  /** Stages content to be written as a blob; its entry refers to it until then. */
  blob(content: Buffer): string {
    this.blobs.push(content);
    return pendingBlob(this.blobs.length - 1);
  }

  /** What is at `p`: a file (any non-tree entry), a directory, or nothing. */
  async at(p: string): Promise<Entry | 'directory' | undefined> {
    const names = splitPath(p);
    let directory = this.root;
    for (let i = 0; i < names.length; i++) {
      const found = directory.entries.get(names[i]);
      if (found === undefined) return undefined;
      const child = await this.open(directory, names[i], found);
      if (i === names.length - 1) return child ? 'directory' : (found as Entry);
      if (!child) return undefined;
      directory = child;
    }
    return undefined;
  }

  /** A file may go at `p` only if neither it, nor a directory of that name, nor a file above it exists. */
  async assertFree(p: string): Promise<void> {
    const names = splitPath(p);
    let directory = this.root;
    for (let i = 0; i < names.length; i++) {
      const found = directory.entries.get(names[i]);
      if (found === undefined) return;
      const child = await this.open(directory, names[i], found);
      if (!child) throw new CommitBuildError(BUILD_MESSAGES.fileExists);
      if (i === names.length - 1) throw new CommitBuildError(BUILD_MESSAGES.directoryExists);
      directory = child;
    }
  }

  async existing(p: string): Promise<Entry> {
    const found = await this.at(p);
    if (found === undefined || found === 'directory') throw new CommitBuildError(BUILD_MESSAGES.fileNotFound);
    return found;
  }

  /** Puts a file at `p`, making the directories above it; the caller has checked that it may. */
  async set(p: string, entry: Entry): Promise<void> {
    const names = splitPath(p);
    let directory = this.root;
    directory.changed = true;
    for (const name of names.slice(0, -1)) {
      const found = directory.entries.get(name);
      let child = found === undefined ? undefined : await this.open(directory, name, found);
      if (!child) {
        child = new Directory(null);
        directory.entries.set(name, child);
      }
      child.changed = true;
      directory = child;
    }
    directory.entries.set(names[names.length - 1], entry);
  }

  /** Removes the file at `p`, and every directory it leaves empty, as git has no empty directories. */
  remove(p: string): void {
    const names = splitPath(p);
    // The caller has found the file, so every directory above it is loaded.
    const above = [this.root];
    for (const name of names.slice(0, -1)) above.push(above[above.length - 1].entries.get(name) as Directory);
    above[above.length - 1].entries.delete(names[names.length - 1]);
    for (let i = above.length - 1; i >= 0; i--) {
      above[i].changed = true;
      if (i > 0 && above[i].entries.size === 0) above[i - 1].entries.delete(names[i - 1]);
    }
  }

  /** The directory an entry is, loaded on first use; undefined for a file. */
  private async open(
    parent: Directory,
    name: string,
    found: Entry | Directory,
  ): Promise<Directory | undefined> {
    if (found instanceof Directory) return found;
    if (found.mode !== DIRECTORY) return undefined;
    const directory = new Directory(found.id);
    await this.fill(directory, found.id);
    parent.entries.set(name, directory);
    return directory;
  }

  private async fill(directory: Directory, treeId: string): Promise<void> {
    const data = await this.source.readTree(treeId);
    for (const { mode, name, id } of parseTreeObject(data, treeId.length / 2, 'latin1'))
      directory.entries.set(name, { mode, id });
  }
}

/** A normalized path's names, as the bytes git stores them. */
const splitPath = (p: string) => p.split('/').map((name) => Buffer.from(name, 'utf8').toString('latin1'));

const modeFor = (executable: boolean | undefined, fallback: string) =>
  executable === undefined ? fallback : executable ? EXECUTABLE : REGULAR;

/** Writes every staged blob in one process and returns their ids, in order. */
async function writeBlobs(dir: string, blobs: Buffer[]): Promise<string[]> {
  if (blobs.length === 0) return [];
  const ids = (output: Buffer) => output.toString('latin1').trim().split('\n');
  if (blobs.length === 1)
    return ids((await git(['hash-object', '-w', '--stdin'], { gitDir: dir, input: blobs[0] })).stdout);
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'forge-blobs-'));
  try {
    const files = blobs.map((_, index) => path.join(scratch, String(index)));
    await Promise.all(blobs.map((content, index) => fs.writeFile(files[index], content)));
    const written = await git(['hash-object', '-w', '--no-filters', '--stdin-paths'], {
      gitDir: dir,
      input: `${files.join('\n')}\n`,
    });
    return ids(written.stdout);
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/**
 * One `git mktree --batch` for all the trees of a commit. Each tree is written once its subtrees have
 * ids, so it is asked and answered one tree at a time.
 */
class TreeWriter {
  private readonly child: GitProcess;
  private answer: { resolve: (id: string) => void; reject: (err: Error) => void } | undefined;
  private output = '';
  private stderr = '';
  private readonly closed: Promise<number>;

  constructor(private readonly dir: string) {
    this.child = spawnGit(['mktree', '-z', '--batch'], { gitDir: dir });
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.output += chunk.toString('latin1');
      const newline = this.output.indexOf('\n');
      if (newline < 0) return;
      const id = this.output.slice(0, newline);
      this.output = this.output.slice(newline + 1);
      const answer = this.answer;
      this.answer = undefined;
      answer?.resolve(id);
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.child.stdin!.on('error', () => {
      // mktree may exit before reading all input; its exit code and stderr say why.
    });
    this.closed = new Promise((resolve) => {
      this.child.on('error', () => resolve(-1));
      this.child.on('close', (code) => resolve(code ?? -1));
    });
    void this.closed.then((code) => {
      this.exitCode = code;
      this.answer?.reject(this.failure());
    });
  }

  private exitCode: number | undefined;

  /** git's refusal, or the project's 404 when the repository went away under the build. */
  private failure(): Error {
    if (!existsSync(this.dir)) return repositoryGone();
    return new GitError(['mktree'], this.exitCode ?? -1, this.stderr);
  }

  write(entries: Array<{ name: string; entry: Entry }>): Promise<string> {
    if (this.exitCode !== undefined) return Promise.reject(this.failure());
    const records = entries.map(({ name, entry }) => {
      const type = entry.mode === DIRECTORY ? 'tree' : entry.mode === SUBMODULE ? 'commit' : 'blob';
      return Buffer.from(`${entry.mode} ${type} ${entry.id}\t${name}\0`, 'latin1');
    });
    return new Promise((resolve, reject) => {
      this.answer = { resolve, reject };
      // An empty record ends the tree.
      this.child.stdin!.write(Buffer.concat([...records, Buffer.from([0])]));
    });
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
    if ((await this.closed) !== 0) throw this.failure();
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill();
  }
}

/** Writes the changed directories, deepest first, and returns the root tree's id. */
async function writeTrees(dir: string, root: Directory, blobIds: string[]): Promise<string> {
  if (!root.changed && root.id) return root.id;
  const writer = new TreeWriter(dir);
  try {
    const write = async (directory: Directory): Promise<string> => {
      const entries: Array<{ name: string; entry: Entry }> = [];
      for (const [name, child] of directory.entries) {
        if (child instanceof Directory) {
          const id = child.changed ? await write(child) : child.id!;
          entries.push({ name, entry: { mode: DIRECTORY, id } });
        } else {
          const id = child.id.startsWith('pending:') ? blobIds[Number(child.id.slice(8))] : child.id;
          entries.push({ name, entry: { mode: child.mode, id } });
        }
      }
      return writer.write(entries);
    };
    const id = await write(root);
    await writer.close();
    return id;
  } finally {
    writer.kill();
  }
}

export interface BuildCommitOptions {
  /** The commit to build on; null for the first commit of an empty repository. */
  parent: string | null;
  actions: FileAction[];
  message: string;
  author: Signature;
  committer: Signature;
}

/**
 * Writes the blobs, trees and commit for `actions` on top of `parent` and returns the new commit's id.
 * Every action is checked before anything is written, so a refused change writes no object.
 */
export async function buildCommit(
  dir: string,
  source: TreeSource,
  options: BuildCommitOptions,
): Promise<string> {
  const tree = await Tree.of(source, options.parent);
  for (const action of options.actions) {
    const filePath = normalizeActionPath(action.filePath);
    switch (action.action) {
      case 'create': {
        await tree.assertFree(filePath);
        const id = tree.blob(action.content ?? Buffer.alloc(0));
        await tree.set(filePath, { mode: modeFor(action.executeFilemode, REGULAR), id });
        break;
      }
      case 'update': {
        const entry = await tree.existing(filePath);
        const id = tree.blob(action.content ?? Buffer.alloc(0));
        // New content makes a submodule entry a file: a gitlink cannot point at a blob.
        const mode = entry.mode === SUBMODULE ? REGULAR : entry.mode;
        await tree.set(filePath, { mode: modeFor(action.executeFilemode, mode), id });
        break;
      }
      case 'delete':
        await tree.existing(filePath);
        tree.remove(filePath);
        break;
      case 'move': {
        const from = normalizeActionPath(action.previousPath ?? '');
        const entry = await tree.existing(from);
        tree.remove(from);
        await tree.assertFree(filePath);
        const id = action.content === undefined ? entry.id : tree.blob(action.content);
        await tree.set(filePath, { mode: entry.mode, id });
        break;
      }
      case 'chmod': {
        const entry = await tree.existing(filePath);
        // Only regular files carry an executable bit; links and submodules keep their mode.
        if (entry.mode === REGULAR || entry.mode === EXECUTABLE)
          await tree.set(filePath, { ...entry, mode: action.executeFilemode ? EXECUTABLE : REGULAR });
        break;
      }
    }
  }
  const blobIds = await writeBlobs(dir, tree.blobs);
  const treeId = await writeTrees(dir, tree.root, blobIds);
  return gitText(['commit-tree', treeId, ...(options.parent ? ['-p', options.parent] : []), '-F', '-'], {
    gitDir: dir,
    input: options.message,
    env: {
      GIT_AUTHOR_NAME: options.author.name,
      GIT_AUTHOR_EMAIL: options.author.email,
      GIT_COMMITTER_NAME: options.committer.name,
      GIT_COMMITTER_EMAIL: options.committer.email,
    },
  });
}

/** `Name <email> seconds zone`, as git writes an identity (it keeps `<`, `>` and newlines out of both). */
const IDENTITY = /^(.*?) ?<([^>]*)> (\d+) [+-]\d{4}$/;

/**
 * The commit `buildCommit` just wrote, read from its object through the shared reader (no process),
 * as `git log` would present it. Null when git's trailer parsing could find trailers in its message
 * (a `:` past the first line), or anything else is unusual: the caller then asks `git log`.
 */
export async function readBuiltCommit(dir: string, id: string): Promise<GitCommit | null> {
  const found = await objectBatches.ask(dir, id, true);
  if (!found?.data || found.object.type !== 'commit') return null;
  const text = found.data.toString('utf8');
  const headerEnd = text.indexOf('\n\n');
  if (headerEnd < 0) return null;
  const message = text.slice(headerEnd + 2);
  const firstLineEnd = message.indexOf('\n');
  if (firstLineEnd >= 0 && message.includes(':', firstLineEnd)) return null;
  const parentIds: string[] = [];
  const identities: Record<string, RegExpExecArray> = {};
  for (const line of text.slice(0, headerEnd).split('\n')) {
    const space = line.indexOf(' ');
    const [key, value] = [line.slice(0, space), line.slice(space + 1)];
    if (key === 'parent') parentIds.push(value);
    else if (key === 'author' || key === 'committer') {
      const identity = IDENTITY.exec(value);
      if (!identity) return null;
      identities[key] = identity;
    } else if (key !== 'tree') return null; // an encoding or a signature: git log's reading, then
  }
  const { author, committer } = identities;
  if (!author || !committer) return null;
  return {
    id,
    parentIds,
    authorName: author[1],
    authorEmail: author[2],
    authoredDate: new Date(Number(author[3]) * 1000),
    committerName: committer[1],
    committerEmail: committer[2],
    committedDate: new Date(Number(committer[3]) * 1000),
    message,
    trailers: {},
    extendedTrailers: {},
  };
}
