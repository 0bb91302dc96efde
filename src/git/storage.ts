/**
 * Where repositories live: named storages, each a directory, with one bare repository per project at a
 * hashed path (`@hashed/ab/cd/<sha256 of the id>.git`), as GitLab lays them out. Paths never depend on
 * names, so renames and transfers move nothing on disk.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { EntityManager } from 'typeorm';
import { faultPoint } from '../core/faults.js';
import { git, gitText } from './git.js';
import { holdStorageShared } from './storage-lock.js';

export type Storages = Record<string, string>;

/** `FORGE_STORAGES=default=/srv/git/a,fast=/srv/git/b`; `default` is always there, under DATA_DIR unless named. */
export function parseStorages(spec: string | undefined, dataDir: string): Storages {
  const storages: Storages = { default: path.join(dataDir, 'repositories') };
  for (const entry of (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const match = /^([A-Za-z0-9_-]+)=(.+)$/.exec(entry);
    if (!match) throw new Error(`FORGE_STORAGES: cannot read "${entry}" (want name=/absolute/path)`);
    storages[match[1]] = path.resolve(match[2]);
  }
  return storages;
}

export interface Signature {
  name: string;
  email: string;
}

/**
 * What a storage holds under `@hashed/ab/cd/`: a repository, one being built, one being removed, and a
 * storage move's copy (see repository-copy.ts).
 */
export const STORAGE_ENTRY = /^([0-9a-f]{64})\.git(?:\.(creating|deleting|moving)-[0-9a-f]{8})?$/;

const suffix = (kind: 'creating' | 'deleting') => `.${kind}-${crypto.randomBytes(4).toString('hex')}`;

/**
 * A project's repository is at its hashed path exactly when it is whole: it is built under a
 * `.creating-*` name and renamed into place, and renamed to a `.deleting-*` name before it is removed.
 * Both names are garbage as soon as their process is gone; see StorageRecovery.
 */
export class RepositoryStorage {
  constructor(private readonly storages: Storages) {}

  names(): string[] {
    return Object.keys(this.storages);
  }

  has(name: string): boolean {
    return name in this.storages;
  }

  /** Each storage's root directory, by name. */
  roots(): Storages {
    return { ...this.storages };
  }

  /** The hex SHA-256 of the id that names a project's repository. */
  static hash(projectId: number): string {
    return crypto.createHash('sha256').update(String(projectId)).digest('hex');
  }

  /** The hashed path of a project's repository, relative to its storage. */
  static relativePath(projectId: number): string {
    const hash = RepositoryStorage.hash(projectId);
    return path.join('@hashed', hash.slice(0, 2), hash.slice(2, 4), `${hash}.git`);
  }

  diskPath(storage: string, projectId: number): string {
    const root = this.storages[storage];
    if (!root) throw new Error(`unknown repository storage "${storage}"`);
    return path.join(root, RepositoryStorage.relativePath(projectId));
  }

  /**
   * A new bare repository whose HEAD names `defaultBranch`, filled by `fill` (the first commit), put at
   * the project's path only once whole. Runs in the transaction that inserted the project's row, which
   * holds the storage lock until it ends; the row must commit after this returns. Anything already at
   * the path belongs to no project (this id's row is the uncommitted one): it is moved away, not reused.
   */
  async create(
    manager: EntityManager,
    storage: string,
    projectId: number,
    defaultBranch: string,
    fill?: (dir: string) => Promise<void>,
  ): Promise<string> {
    await holdStorageShared(manager);
    const dir = this.diskPath(storage, projectId);
    const building = `${dir}${suffix('creating')}`;
    await fs.mkdir(path.dirname(dir), { recursive: true });
    try {
      await fs.mkdir(building);
      await git(['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`, building]);
      if (fill) await fill(building);
      faultPoint('project-create:built');
      if (await this.moveToTrash(dir)) await this.emptyTrash(storage, projectId);
      await fs.rename(building, dir);
    } catch (err) {
      await fs.rm(building, { recursive: true, force: true });
      throw err;
    }
    return dir;
  }

  /**
   * Moves a deleted project's repository out of its path, for `emptyTrash` to remove. Only for a
   * project whose row is gone (committed): the path then belongs to nobody. A missing repository moves
   * nothing.
   */
  async retire(storage: string, projectId: number): Promise<void> {
    await this.moveToTrash(this.diskPath(storage, projectId));
  }

  /**
   * `retire` for projects whose deletion just committed: their paths free at once, and requests still
   * at work there fail with 404 rather than write into them. A failure is left to the `project.deleted`
   * job, which does the same and reports it: the deletion itself is done.
   */
  async retireDeleted(repositories: Array<{ storage: string; projectId: number }>): Promise<void> {
    for (const { storage, projectId } of repositories)
      await this.retire(storage, projectId).catch(() => undefined);
  }

  /** Removes every `.deleting-*` of the project's path. */
  async emptyTrash(storage: string, projectId: number): Promise<void> {
    const dir = this.diskPath(storage, projectId);
    const prefix = `${path.basename(dir)}.deleting-`;
    const names = await fs.readdir(path.dirname(dir)).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.startsWith(prefix)))
      await fs.rm(path.join(path.dirname(dir), name), { recursive: true, force: true });
  }

  /**
   * Renames a repository, or one being built, to a `.deleting-*` name at once (removal may take long);
   * false if nothing was there.
   */
  async moveToTrash(dir: string): Promise<boolean> {
    try {
      await fs.rename(dir, `${dir.replace(/\.creating-[0-9a-f]{8}$/, '')}${suffix('deleting')}`);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }

  /** The first commit of a new project: a README.md on `branch`, written without a work tree. */
  async initializeWithReadme(dir: string, branch: string, text: string, author: Signature): Promise<string> {
    const blob = await gitText(['hash-object', '-w', '--stdin'], { gitDir: dir, input: text });
    const tree = await gitText(['mktree'], { gitDir: dir, input: `100644 blob ${blob}\tREADME.md\n` });
    const env = {
      GIT_AUTHOR_NAME: author.name,
      GIT_AUTHOR_EMAIL: author.email,
      GIT_COMMITTER_NAME: author.name,
      GIT_COMMITTER_EMAIL: author.email,
    };
    const commit = await gitText(['commit-tree', tree, '-m', 'Initial commit'], { gitDir: dir, env });
    await git(['update-ref', `refs/heads/${branch}`, commit, ''], { gitDir: dir });
    return commit;
  }
}
