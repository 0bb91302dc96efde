/**
 * Commits made without a work tree, as GitLab makes them for the API and the web editor: a temporary
 * index seeded from the parent's tree, changed by file actions, written as a tree and wrapped in a
 * commit. No ref moves here; callers move the branch through RepositoriesService.updateRefs, so the
 * push rules apply as they do to `git push`.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { git, gitText } from './git.js';
import { ZERO_SHA } from './push-rules.js';
import type { Signature } from './storage.js';

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

interface Entry {
  mode: string;
  sha: string;
}

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
  if (segments.some((s) => s.toLowerCase() === '.git' || s.includes('\0')))
    throw new CommitBuildError(BUILD_MESSAGES.invalidPath(raw));
  return segments.join('/');
}

/** The tree as a flat map of paths, changed action by action, with GitLab's checks. */
class Tree {
  constructor(readonly entries: Map<string, Entry>) {}

  isDirectory(p: string): boolean {
    const prefix = `${p}/`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) return true;
    return false;
  }

  /** A file may go at `p` only if neither it, nor a directory of that name, nor a file above it exists. */
  assertFree(p: string): void {
    if (this.entries.has(p)) throw new CommitBuildError(BUILD_MESSAGES.fileExists);
    if (this.isDirectory(p)) throw new CommitBuildError(BUILD_MESSAGES.directoryExists);
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) {
      if (this.entries.has(parts.slice(0, i).join('/')))
        throw new CommitBuildError(BUILD_MESSAGES.fileExists);
    }
  }

  existing(p: string): Entry {
    const entry = this.entries.get(p);
    if (!entry) throw new CommitBuildError(BUILD_MESSAGES.fileNotFound);
    return entry;
  }
}

const modeFor = (executable: boolean | undefined, fallback: string) =>
  executable === undefined ? fallback : executable ? EXECUTABLE : REGULAR;

function parseIndex(output: Buffer): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  for (const record of output.toString('utf8').split('\0')) {
    if (!record) continue;
    const tab = record.indexOf('\t');
    const [mode, sha] = record.slice(0, tab).split(' ');
    entries.set(record.slice(tab + 1), { mode, sha });
  }
  return entries;
}

export interface BuildCommitOptions {
  /** The commit to build on; null for the first commit of an empty repository. */
  parent: string | null;
  actions: FileAction[];
  message: string;
  author: Signature;
  committer: Signature;
}

/** Writes the blobs, tree and commit for `actions` on top of `parent` and returns the new commit's id. */
export async function buildCommit(dir: string, options: BuildCommitOptions): Promise<string> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'forge-index-'));
  const env = { GIT_INDEX_FILE: path.join(scratch, 'index') };
  const run = (args: string[], input?: string | Buffer) => git(args, { gitDir: dir, env, input });
  try {
    await run(options.parent ? ['read-tree', options.parent] : ['read-tree', '--empty']);
    const before = parseIndex((await run(['ls-files', '--stage', '-z'])).stdout);
    const tree = new Tree(new Map(before));
    const writeBlob = async (content: Buffer) =>
      (await run(['hash-object', '-w', '--stdin'], content)).stdout.toString('utf8').trim();

    for (const action of options.actions) {
      const filePath = normalizeActionPath(action.filePath);
      switch (action.action) {
        case 'create': {
          tree.assertFree(filePath);
          const sha = await writeBlob(action.content ?? Buffer.alloc(0));
          tree.entries.set(filePath, { mode: modeFor(action.executeFilemode, REGULAR), sha });
          break;
        }
        case 'update': {
          const entry = tree.existing(filePath);
          const sha = await writeBlob(action.content ?? Buffer.alloc(0));
          tree.entries.set(filePath, { mode: modeFor(action.executeFilemode, entry.mode), sha });
          break;
        }
        case 'delete':
          tree.existing(filePath);
          tree.entries.delete(filePath);
          break;
        case 'move': {
          const from = normalizeActionPath(action.previousPath ?? '');
          const entry = tree.existing(from);
          tree.entries.delete(from);
          tree.assertFree(filePath);
          const sha = action.content === undefined ? entry.sha : await writeBlob(action.content);
          tree.entries.set(filePath, { mode: entry.mode, sha });
          break;
        }
        case 'chmod': {
          const entry = tree.existing(filePath);
          // Only regular files carry an executable bit; links and submodules keep their mode.
          if (entry.mode === REGULAR || entry.mode === EXECUTABLE)
            tree.entries.set(filePath, { ...entry, mode: action.executeFilemode ? EXECUTABLE : REGULAR });
          break;
        }
      }
    }

    // Removals first, so that a file may replace a directory (or the reverse) in one commit.
    const removals: string[] = [];
    const additions: string[] = [];
    for (const key of before.keys()) if (!tree.entries.has(key)) removals.push(`0 ${ZERO_SHA}\t${key}\0`);
    for (const [key, entry] of tree.entries) {
      const old = before.get(key);
      if (!old || old.mode !== entry.mode || old.sha !== entry.sha)
        additions.push(`${entry.mode} ${entry.sha}\t${key}\0`);
    }
    if (removals.length + additions.length > 0)
      await run(['update-index', '-z', '--index-info'], [...removals, ...additions].join(''));
    const treeId = (await run(['write-tree'])).stdout.toString('utf8').trim();

    return await gitText(
      ['commit-tree', treeId, ...(options.parent ? ['-p', options.parent] : []), '-F', '-'],
      {
        gitDir: dir,
        input: options.message,
        env: {
          GIT_AUTHOR_NAME: options.author.name,
          GIT_AUTHOR_EMAIL: options.author.email,
          GIT_COMMITTER_NAME: options.committer.name,
          GIT_COMMITTER_EMAIL: options.committer.email,
        },
      },
    );
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}
