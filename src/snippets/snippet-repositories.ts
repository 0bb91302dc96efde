/**
 * Snippet repositories: one bare repository per snippet at `@snippets/ab/cd/<sha256 of the id>.git` in
 * a named storage, as GitLab lays them out. Every change is one commit on `main`, made without a work
 * tree (commit-builder); reads go through GitRepository's long-lived object reader.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { EntityManager } from 'typeorm';
import { KeyedLock } from '../core/keyed-lock.js';
import { type FileAction } from '../git/commit-builder.js';
import type { ProcessOutput } from '../git/process-stream.js';
import { repositorySize } from '../git/object-counts.js';
import { initBareRepository, openGitRepository } from '../git/repository.js';
import { holdStorageShared } from '../git/storage-lock.js';
import type { RepositoryStorage, Signature } from '../git/storage.js';

export const SNIPPET_BRANCH = 'main';
const HEAD_REF = `refs/heads/${SNIPPET_BRANCH}`;

export interface SnippetFile {
  path: string;
  blobId: string;
  size: number;
}

export interface SnippetCommit {
  actions: FileAction[];
  message: string;
  author: Signature;
}

const suffix = (kind: 'creating') => `.${kind}-${crypto.randomBytes(4).toString('hex')}`;

export class SnippetRepositories {
  private readonly locks = new KeyedLock();

  constructor(private readonly storage: RepositoryStorage) {}

  /** The hashed path of a snippet's repository, relative to its storage. */
  static relativePath(snippetId: number): string {
    const hash = crypto.createHash('sha256').update(String(snippetId)).digest('hex');
    return path.join('@snippets', hash.slice(0, 2), hash.slice(2, 4), `${hash}.git`);
  }

  dir(storage: string, snippetId: number): string {
    const root = this.storage.roots()[storage];
    if (!root) throw new Error(`unknown repository storage "${storage}"`);
    return path.join(root, SnippetRepositories.relativePath(snippetId));
  }

  /**
   * A new repository holding the first commit, put in place only once whole. Runs in the transaction
   * that inserted the snippet's row (which holds the storage lock); anything already at the path
   * belongs to no snippet and is moved away. Throws CommitBuildError for a refused file.
   */
  async create(manager: EntityManager, storage: string, snippetId: number, first: SnippetCommit) {
    await holdStorageShared(manager);
    const dir = this.dir(storage, snippetId);
    const building = `${dir}${suffix('creating')}`;
    await fs.mkdir(path.dirname(dir), { recursive: true });
    try {
      await fs.mkdir(building);
      await initBareRepository(building, SNIPPET_BRANCH);
      const repository = openGitRepository(building);
      const commit = await repository.buildCommit({ parent: null, committer: first.author, ...first });
      await repository.updateRef(HEAD_REF, commit, null);
      await this.storage.moveToTrash(dir);
      await fs.rename(building, dir);
    } catch (err) {
      await fs.rm(building, { recursive: true, force: true });
      throw err;
    }
  }

  /** One commit on `main`; one writer at a time per repository in this process. Returns the commit id. */
  commit(storage: string, snippetId: number, change: SnippetCommit): Promise<string> {
    const dir = this.dir(storage, snippetId);
    return this.locks.run(dir, async () => {
      const repository = openGitRepository(dir);
      const parent = await repository.resolveCommit(HEAD_REF);
      const commit = await repository.buildCommit({ parent, committer: change.author, ...change });
      await repository.updateRef(HEAD_REF, commit, parent);
      return commit;
    });
  }

  /** The commit `ref` names (default: the tip of `main`), or null. */
  resolve(storage: string, snippetId: number, ref = HEAD_REF): Promise<string | null> {
    return openGitRepository(this.dir(storage, snippetId)).resolveCommit(ref);
  }

  /** Every file at `commit`, in git's order. */
  async files(storage: string, snippetId: number, commit: string | null): Promise<SnippetFile[]> {
    if (!commit) return [];
    const repository = openGitRepository(this.dir(storage, snippetId));
    const tree = await repository.object(`${commit}^{tree}`);
    if (!tree) return [];
    const blobs = (await repository.tree(tree.id, '', true)).filter((entry) => entry.type === 'blob');
    const objects = await repository.objects(blobs.map((entry) => entry.id));
    return blobs.map((entry, i) => ({ path: entry.path, blobId: entry.id, size: objects[i]?.size ?? 0 }));
  }

  /** The bytes of the file at `filePath` in `commit`, streamed; null when there is no such file. */
  async stream(
    storage: string,
    snippetId: number,
    commit: string,
    filePath: string,
  ): Promise<{ size: number; output: ProcessOutput } | null> {
    const repository = openGitRepository(this.dir(storage, snippetId));
    const blob = await repository.object(`${commit}:${filePath}`);
    if (!blob || blob.type !== 'blob') return null;
    return { size: blob.size, output: await repository.streamBlob(blob.id, 0) };
  }

  /** Bytes on disk, as git counts them (loose objects and packs). */
  size(storage: string, snippetId: number): Promise<number> {
    return repositorySize(this.dir(storage, snippetId));
  }

  /** Moves a deleted snippet's repository out of its path at once; `emptyTrash` removes it. */
  async retire(storage: string, snippetId: number): Promise<void> {
    await this.storage.moveToTrash(this.dir(storage, snippetId));
  }

  /** Removes every `.deleting-*` of the snippet's path. */
  async emptyTrash(storage: string, snippetId: number): Promise<void> {
    const dir = this.dir(storage, snippetId);
    const prefix = `${path.basename(dir)}.deleting-`;
    const names = await fs.readdir(path.dirname(dir)).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.startsWith(prefix)))
      await fs.rm(path.join(path.dirname(dir), name), { recursive: true, force: true });
  }
}
