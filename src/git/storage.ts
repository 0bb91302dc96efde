/**
 * Where repositories live: named storages, each a directory, with one bare repository per project at a
 * hashed path (`@hashed/ab/cd/<sha256 of the id>.git`), as GitLab lays them out. Paths never depend on
 * names, so renames and transfers move nothing on disk.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { git, gitText } from './git.js';

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

export class RepositoryStorage {
  constructor(private readonly storages: Storages) {}

  names(): string[] {
    return Object.keys(this.storages);
  }

  has(name: string): boolean {
    return name in this.storages;
  }

  /** The hashed path of a project's repository, relative to its storage. */
  static relativePath(projectId: number): string {
    const hash = crypto.createHash('sha256').update(String(projectId)).digest('hex');
    return path.join('@hashed', hash.slice(0, 2), hash.slice(2, 4), `${hash}.git`);
  }

  diskPath(storage: string, projectId: number): string {
    const root = this.storages[storage];
    if (!root) throw new Error(`unknown repository storage "${storage}"`);
    return path.join(root, RepositoryStorage.relativePath(projectId));
  }

  /** A new bare repository whose HEAD names `defaultBranch`. Fails if one is already there. */
  async create(storage: string, projectId: number, defaultBranch: string): Promise<string> {
    const dir = this.diskPath(storage, projectId);
    await fs.mkdir(path.dirname(dir), { recursive: true });
    await fs.mkdir(dir);
    try {
      await git(['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`, dir]);
      await git(['config', 'receive.advertisePushOptions', 'true'], { gitDir: dir });
      return dir;
    } catch (err) {
      await fs.rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /**
   * Moves a repository out of its place, to be discarded once the deletion it belongs to commits or
   * restored if it does not. A missing repository moves nothing.
   */
  async moveAside(
    storage: string,
    projectId: number,
  ): Promise<{ restore(): Promise<void>; discard(): Promise<void>; aside: string | null }> {
    const dir = this.diskPath(storage, projectId);
    const aside = `${dir}.deleting-${crypto.randomBytes(4).toString('hex')}`;
    let moved = true;
    try {
      await fs.rename(dir, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      moved = false;
    }
    return {
      restore: async () => {
        if (moved) await fs.rename(aside, dir);
      },
      discard: async () => {
        if (moved) await fs.rm(aside, { recursive: true, force: true });
      },
      // Relative to the storage, so that a later removal does not depend on where the storage is mounted.
      aside: moved ? path.relative(this.storages[storage], aside) : null,
    };
  }

  /** Removes what `moveAside` moved, by the relative path it reported; nothing else can be named. */
  async removeAside(storage: string, aside: string): Promise<void> {
    if (!/^@hashed\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}\.git\.deleting-[0-9a-f]{8}$/.test(aside))
      throw new Error(`not a repository moved aside: ${aside}`);
    const root = this.storages[storage];
    if (!root) throw new Error(`unknown repository storage "${storage}"`);
    await fs.rm(path.join(root, aside), { recursive: true, force: true });
  }

  async remove(storage: string, projectId: number): Promise<void> {
    await fs.rm(this.diskPath(storage, projectId), { recursive: true, force: true });
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
