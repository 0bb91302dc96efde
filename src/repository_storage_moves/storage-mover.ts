/**
 * The repository storage move engine: copies a container's repository to another storage, verifies
 * the copy, switches the container's storage in one transaction, and removes the source copy. It works
 * over a small container interface (projects, groups for their wiki, snippets), so each kind of
 * container only says where its repository is and how its storage is recorded.
 *
 * States, as GitLab's: scheduled (read-only, see write-gate.ts) → started → replicated (the container
 * names the destination, and is writable again) → finished (the source copy is gone); a failure before
 * the switch ends in failed, after it in cleanup_failed. Crash safety follows the storage's own rules
 * (src/git/storage-recovery.ts): the copy is built under a `.moving-*` name nothing else reads, renamed
 * to the hashed path only inside the transaction that records the destination (under the shared
 * storage lock, so a sweep never sees it half-owned), and the source copy is an orphan once that
 * commits. So a process killed at any point leaves the repository whole on exactly the storage its row
 * names; the move's job runs again after the restart and resumes from its state.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DataSource, EntityManager } from 'typeorm';
import { faultPause, faultPoint } from '../core/faults.js';
import { lendersOf } from '../git/object-sharing.js';
import {
  copyDir,
  copyRepository,
  removeCopyLeftovers,
  removeTrash,
  verifyCopy,
  verifyRefs,
} from '../git/repository-copy.js';
import { holdStorageShared } from '../git/storage-lock.js';
import type { RepositoryStorage } from '../git/storage.js';
import { MOVE_STATES, type ContainerType, type RepositoryWriteGate } from './write-gate.js';

/** Where a container's repository is, read under its row lock. */
export interface ContainerLocation {
  /** The storage its row names; null when the container has no repository at all (a group without a wiki). */
  storage: string | null;
  /** A repository it borrows objects from (a fork's lender), with that repository's storage. */
  lender?: { id: number; storage: string } | null;
}

/** What the engine needs to know about one kind of container. */
export interface RepositoryContainer {
  readonly type: ContainerType;
  /** GitLab's name for it in messages ("project", "group", "snippet"). */
  readonly label: string;
  /** Locks the container's row in `tx` and says where its repository is; null when it is gone. */
  locate(tx: EntityManager, id: number): Promise<ContainerLocation | null>;
  /** Its repository's directory on a storage. */
  diskPath(storage: string, id: number): string;
  /** Records the new storage (and whether it still borrows objects), in the switch transaction. */
  relocate(tx: EntityManager, id: number, storage: string, borrowing: boolean): Promise<void>;
  /** Containers whose repositories borrow objects from this one's, with their storages. */
  borrowers(manager: EntityManager, id: number): Promise<Array<{ id: number; storage: string }>>;
  /** Containers whose repositories are on `storage`, by id after `afterId`, for bulk moves. */
  onStorage(manager: EntityManager, storage: string, afterId: number, limit: number): Promise<number[]>;
}

export interface MoveRow {
  id: number;
  container_type: ContainerType;
  container_id: number;
  state: number;
  source_storage_name: string;
  destination_storage_name: string;
}

/** Gives a borrowing repository its own objects before its lender's copy goes (a project's fork). */
export type Dissociate = (storage: string, borrowerId: number, lenderId: number) => Promise<void>;

/** A move's failure, as GitLab records it in `error_message` (at most 256 characters). */
class MoveError extends Error {}

/** How long a move waits for pushes in flight, as GitLab's three polls ten seconds apart. */
const PUSH_WAIT_MS = 30_000;

export class StorageMover {
  private readonly containers = new Map<ContainerType, RepositoryContainer>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly storage: RepositoryStorage,
    private readonly gate: RepositoryWriteGate,
    private readonly dissociate: Dissociate,
    containers: readonly RepositoryContainer[],
  ) {
    for (const container of containers) this.containers.set(container.type, container);
  }

  container(type: ContainerType): RepositoryContainer {
    const container = this.containers.get(type);
    if (!container) throw new Error(`no repository container of type ${type}`);
    return container;
  }

  /**
   * Runs one move from whatever state it is in; safe to repeat and after a crash. A move that fails
   * is marked failed (or cleanup_failed) and not retried: rescheduling it is the administrator's call.
   */
  async run(moveId: number): Promise<void> {
    let move = await this.claim(moveId);
    if (!move) return;
    if (move.state === MOVE_STATES.started) move = await this.replicate(move);
    if (move.state === MOVE_STATES.replicated) await this.cleanup(move);
  }

  /** scheduled → started; a move already started or replicated (a resumed job) as it is; else null. */
  private async claim(moveId: number): Promise<MoveRow | null> {
    await this.dataSource.query(
      `UPDATE repository_storage_moves SET state = $2, updated_at = now() WHERE id = $1 AND state = $3`,
      [moveId, MOVE_STATES.started, MOVE_STATES.scheduled],
    );
    const [row] = (await this.dataSource.query('SELECT * FROM repository_storage_moves WHERE id = $1', [
      moveId,
    ])) as MoveRow[];
    if (!row) return null;
    const resumable: number[] = [MOVE_STATES.started, MOVE_STATES.replicated];
    return resumable.includes(row.state)
      ? { ...row, id: Number(row.id), container_id: Number(row.container_id) }
      : null;
  }

  /** started → replicated: copy, verify, switch. Any failure → failed, with the copy removed. */
  private async replicate(move: MoveRow): Promise<MoveRow> {
    const container = this.container(move.container_type);
    const { container_id: id, source_storage_name: source, destination_storage_name: destination } = move;
    let building: string | null = null;
    try {
      if (!(await this.gate.drained(container.type, id, PUSH_WAIT_MS)))
        throw new MoveError(`Timeout waiting for ${container.label} repository pushes`);
      const location = await this.dataSource.transaction((tx) => container.locate(tx, id));
      if (!location) throw new MoveError(`${capitalize(container.label)} not found`);
      const sourceDir = container.diskPath(source, id);
      const destinationDir = container.diskPath(destination, id);
      let borrowing = Boolean(location.lender);
      // Nothing to copy: no repository (a group without a wiki), or the same storage (GitLab's same
      // filesystem: the move only records the storage).
      if (location.storage !== null && source !== destination) {
        if (location.storage !== source)
          throw new MoveError(`${capitalize(container.label)} repository is not on storage ${source}`);
        await removeCopyLeftovers(destinationDir);
        const lender = location.lender;
        const lenderDir = lender?.storage === destination ? container.diskPath(destination, lender.id) : null;
        building = copyDir(destinationDir);
        await copyRepository(sourceDir, building, lenderDir);
        borrowing = lenderDir !== null;
        await verifyCopy(sourceDir, building);
        faultPoint('storage-move:replicated');
        await faultPause('storage-move:replicated');
      }
      await this.dataSource.transaction(async (tx) => {
        await holdStorageShared(tx);
        const now = await container.locate(tx, id);
        if (!now) throw new MoveError(`${capitalize(container.label)} not found`);
        // Another run of this move (a job delivered twice) switched it meanwhile.
        if (now.storage !== location.storage) throw new MoveError('The move was replicated meanwhile');
        if (building) {
          // Cheap under the lock: the refs again, in case a write from another process landed.
          await verifyRefs(sourceDir, building);
          // Whatever is at the destination path belongs to nobody (the row names the source).
          if (await this.storage.moveToTrash(destinationDir)) await removeTrash(destinationDir);
          await fs.rename(building, destinationDir);
          building = destinationDir;
        }
        await container.relocate(tx, id, destination, borrowing);
        await tx.query(`UPDATE repository_storage_moves SET state = $2, updated_at = now() WHERE id = $1`, [
          move.id,
          MOVE_STATES.replicated,
        ]);
      });
      building = null;
      return { ...move, state: MOVE_STATES.replicated };
    } catch (err) {
      if (building) await this.discard(container, id, source, building).catch(() => undefined);
      // Recorded as GitLab records it. When that changes nothing (the switch committed after all) or
      // fails (the database is away), the job retries and resumes from the state the move is in.
      if (!(await this.fail(move, [MOVE_STATES.scheduled, MOVE_STATES.started], MOVE_STATES.failed, err)))
        throw err;
      return { ...move, state: MOVE_STATES.failed };
    }
  }

  /**
   * replicated → finished: repositories that borrow from the source copy get their own objects first
   * (the copy holds only what its refs reach; a lender keeps more), then the source copy goes.
   */
  private async cleanup(move: MoveRow): Promise<void> {
    const container = this.container(move.container_type);
    const { container_id: id, source_storage_name: source, destination_storage_name: destination } = move;
    try {
      if (source !== destination) {
        const sourceDir = container.diskPath(source, id);
        for (const borrower of await container.borrowers(this.dataSource.manager, id)) {
          const dir = container.diskPath(borrower.storage, borrower.id);
          const lenders = (await lendersOf(dir)).map((lender) => path.resolve(lender));
          if (lenders.includes(path.resolve(sourceDir)))
            await this.dissociate(borrower.storage, borrower.id, id);
        }
        faultPoint('storage-move:cleanup');
        await this.storage.moveToTrash(sourceDir);
        await removeTrash(sourceDir);
      }
      await this.dataSource.query(
        `UPDATE repository_storage_moves SET state = $2, updated_at = now() WHERE id = $1 AND state = $3`,
        [move.id, MOVE_STATES.finished, MOVE_STATES.replicated],
      );
    } catch (err) {
      if (!(await this.fail(move, [MOVE_STATES.replicated], MOVE_STATES.cleanup_failed, err))) throw err;
    }
  }

  /**
   * A copy that will not be used. One already renamed into place goes only once the row is seen to
   * still name the source: a commit whose answer was lost may have switched it.
   */
  private async discard(container: RepositoryContainer, id: number, source: string, dir: string) {
    if (dir.includes('.moving-')) return fs.rm(dir, { recursive: true, force: true });
    const location = await this.dataSource
      .transaction((tx) => container.locate(tx, id))
      .catch(() => undefined);
    if (location === undefined || (location !== null && location.storage !== source)) return;
    if (await this.storage.moveToTrash(dir)) await removeTrash(dir);
  }

  /** Moves a move from one of `from` to the failure state `to`; false when it was in none of them. */
  private async fail(move: MoveRow, from: number[], to: number, err: unknown): Promise<boolean> {
    const message = (err instanceof Error ? err.message : String(err)).slice(0, 256);
    const rows = (await this.dataSource.query(
      `WITH failed AS (
         UPDATE repository_storage_moves SET state = $2, error_message = $3, updated_at = now()
         WHERE id = $1 AND state = ANY($4::smallint[]) RETURNING id
       ) SELECT id FROM failed`,
      [move.id, to, message, from],
    )) as unknown[];
    return rows.length > 0;
  }
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
