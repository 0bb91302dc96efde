/**
 * What a process killed at any point can leave in the storages, and how it is put right: at start,
 * every hour, and (for one project) after each deletion. The rules, with the order of operations in
 * RepositoryStorage and ProjectsService that makes them enough:
 *
 * - A repository at a project's hashed path is complete (it was built under `.creating-*` and renamed
 *   into place before its row committed). With no committed row it is an orphan: a creation killed
 *   before its commit, or a deletion killed after its commit and before the repository moved. Orphans
 *   and `.creating-*` directories are moved to the trash under the exclusive storage lock, which waits
 *   for every creation in flight, so a row about to commit never loses its repository.
 * - A `.deleting-*` directory is trash, always: nothing ever moves one back.
 * - A `.moving-*` directory is a storage move's copy, renamed into place only by the move's own
 *   transaction; one nothing touched since `staleBefore` belongs to a move whose process died (its
 *   resumed job copies afresh) and is removed, counted as unfinished.
 * - An orphan that a project's repository still borrows objects from (a deleted fork source) stays
 *   until its deletion job has given the borrowers their own copies; see object-sharing.ts.
 * - Inside a project's repository, what git leaves when it is killed during a push or a ref update (its
 *   quarantine `objects/tmp_objdir-*`, temporary packs, `*.lock` files) is removed once nothing touched
 *   it since `staleBefore`: this process's start when no other server shares the database (nothing
 *   else can be writing), else an hour ago, as Gitaly's housekeeping does.
 * - A row whose repository is missing is reported, not repaired: nothing half-done is ever made whole.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import { faultPoint } from '../core/faults.js';
import { lendersOf } from './object-sharing.js';
import { holdStorageExclusive } from './storage-lock.js';
import { RepositoryStorage, STORAGE_ENTRY } from './storage.js';

export interface RecoveryReport {
  /** Repositories no project owns, and repositories whose creation never finished. */
  orphans: number;
  unfinished: number;
  /** `.deleting-*` directories removed, the orphans' included. */
  trash: number;
  /** Push quarantines and temporary packs, and lock files, left in projects' repositories. */
  quarantines: number;
  locks: number;
  /** Repositories no project owns that forks still borrow objects from, left for their deletion job. */
  lent: number;
  /** Projects whose repository is not on disk. */
  missing: number[];
}

interface Entry {
  storage: string;
  dir: string;
  hash: string;
  kind: 'repository' | 'creating' | 'deleting' | 'moving';
}

/** git's temporary files in a repository: quarantines and packs being written, and lock files. */
const QUARANTINE = /^tmp_objdir-/;
const TEMPORARY_PACK = /^tmp_/;
const LOCK = /\.lock$/;

export class StorageRecovery {
  constructor(
    private readonly dataSource: DataSource,
    private readonly storage: RepositoryStorage,
  ) {}

  /**
   * Finishes a deleted project's removal (the `project.deleted` job): moves its repository away if the
   * deletion did not get to, then removes the trash. Safe to repeat, and after any crash.
   */
  async finishRemoval(storage: string, projectId: number): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      await holdStorageExclusive(tx);
      // A row with this id again (PGlite may hand out an id again after a crash) owns the path now.
      const [row] = await tx.query('SELECT 1 FROM projects WHERE id = $1', [projectId]);
      if (!row) await this.storage.retire(storage, projectId);
    });
    faultPoint('repository-remove:started');
    await this.storage.emptyTrash(storage, projectId);
  }

  /** The whole sweep; see the rules above. */
  async recover(options: { staleBefore: Date }): Promise<RecoveryReport> {
    const report: RecoveryReport = {
      orphans: 0,
      unfinished: 0,
      trash: 0,
      quarantines: 0,
      locks: 0,
      lent: 0,
      missing: [],
    };
    const entries = await this.walk();
    const owned = new Set<string>();
    const lent = new Set<string>();
    await this.dataSource.transaction(async (tx) => {
      await holdStorageExclusive(tx);
      // Read under the lock: every creation that placed a repository has committed or rolled back.
      const rows: Array<{ id: number; repository_storage: string }> = await tx.query(
        'SELECT id, repository_storage FROM projects',
      );
      for (const row of rows)
        owned.add(`${row.repository_storage}/${RepositoryStorage.hash(Number(row.id))}`);
      for (const entry of entries)
        if (entry.kind === 'repository' && owned.has(key(entry)))
          for (const lender of await lendersOf(entry.dir)) lent.add(lender);
      for (const entry of entries) {
        if (entry.kind === 'deleting' || entry.kind === 'moving') continue;
        if (entry.kind === 'repository' && owned.has(key(entry))) continue;
        // A deleted lender stays until its deletion job has given every borrower its own copy.
        if (entry.kind === 'repository' && lent.has(path.resolve(entry.dir))) {
          report.lent++;
          continue;
        }
        const moved = await this.storage.moveToTrash(entry.dir);
        if (moved && entry.kind === 'repository') report.orphans++;
        if (moved && entry.kind === 'creating') report.unfinished++;
      }
      for (const row of rows) {
        const dir = this.storage.diskPath(row.repository_storage, Number(row.id));
        if (!(await exists(dir))) report.missing.push(Number(row.id));
      }
    });
    // Removal can take long, and needs no lock: nothing reads or revives a `.deleting-*` directory.
    for (const entry of await this.walk()) {
      if (entry.kind !== 'deleting') continue;
      await fs.rm(entry.dir, { recursive: true, force: true });
      report.trash++;
    }
    for (const entry of entries) {
      if (entry.kind !== 'moving' || (await lastTouched(entry.dir)) >= options.staleBefore.getTime())
        continue;
      await fs.rm(entry.dir, { recursive: true, force: true });
      report.unfinished++;
    }
    for (const entry of entries) {
      if (entry.kind !== 'repository' || !owned.has(key(entry))) continue;
      const cleaned = await cleanRepository(entry.dir, options.staleBefore.getTime());
      report.quarantines += cleaned.quarantines;
      report.locks += cleaned.locks;
    }
    return report;
  }

  /** Everything under each storage's `@hashed/ab/cd/` that names a repository. */
  private async walk(): Promise<Entry[]> {
    const entries: Entry[] = [];
    for (const [storage, root] of Object.entries(this.storage.roots())) {
      const hashed = path.join(root, '@hashed');
      for (const a of await subdirectories(hashed)) {
        for (const b of await subdirectories(path.join(hashed, a))) {
          for (const name of await subdirectories(path.join(hashed, a, b))) {
            const match = STORAGE_ENTRY.exec(name);
            if (!match) continue;
            const kind = (match[2] as Entry['kind'] | undefined) ?? 'repository';
            entries.push({ storage, dir: path.join(hashed, a, b, name), hash: match[1], kind });
          }
        }
      }
    }
    return entries;
  }
}

const key = (entry: Entry) => `${entry.storage}/${entry.hash}`;

async function subdirectories(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}

async function exists(target: string): Promise<boolean> {
  return fs.access(target).then(
    () => true,
    () => false,
  );
}

/** The latest modification of `target` or anything below it; 0 when it is gone. */
async function lastTouched(target: string): Promise<number> {
  const stat = await fs.lstat(target).catch(() => undefined);
  if (!stat) return 0;
  let latest = stat.mtimeMs;
  if (stat.isDirectory()) {
    const names = await fs.readdir(target).catch(() => [] as string[]);
    for (const name of names) latest = Math.max(latest, await lastTouched(path.join(target, name)));
  }
  return latest;
}

/** Removes git's leftovers in one repository that nothing touched since `staleBefore` (ms). */
async function cleanRepository(
  repository: string,
  staleBefore: number,
): Promise<{ quarantines: number; locks: number }> {
  const cleaned = { quarantines: 0, locks: 0 };
  const removeIfStale = async (target: string, kind: keyof typeof cleaned) => {
    const touched = await lastTouched(target);
    if (touched === 0 || touched >= staleBefore) return;
    await fs.rm(target, { recursive: true, force: true });
    cleaned[kind]++;
  };
  const objects = path.join(repository, 'objects');
  for (const name of await fs.readdir(objects).catch(() => [] as string[]))
    if (QUARANTINE.test(name)) await removeIfStale(path.join(objects, name), 'quarantines');
  const packs = path.join(objects, 'pack');
  for (const name of await fs.readdir(packs).catch(() => [] as string[]))
    if (TEMPORARY_PACK.test(name)) await removeIfStale(path.join(packs, name), 'quarantines');
  for (const name of await fs.readdir(repository).catch(() => [] as string[]))
    if (LOCK.test(name)) await removeIfStale(path.join(repository, name), 'locks');
  const refs = path.join(repository, 'refs');
  const below = (await fs.readdir(refs, { recursive: true }).catch(() => [] as string[])) as string[];
  for (const name of below) if (LOCK.test(name)) await removeIfStale(path.join(refs, name), 'locks');
  return cleaned;
}
