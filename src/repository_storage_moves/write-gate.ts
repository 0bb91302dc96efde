/**
 * Read-only repositories during a storage move. A repository is read-only while a move of it is
 * scheduled or started (GitLab sets the flag when the move is scheduled and clears it when the move is
 * replicated or fails); the moves table says so, so there is no flag to forget to clear after a crash.
 *
 * Every repository write (pushes, and ref updates through the API) enters the gate before it asks
 * whether the repository is read-only, and leaves once its refs moved. A move, once its repository is
 * read-only, waits for the writers that entered before (GitLab's reference counter), so nothing lands
 * on the source after the copy began. The count is this process's: writers in other processes sharing
 * the database are caught by the move's check that the copy's refs equal the source's.
 */
import type { EntityManager } from 'typeorm';

export const READ_ONLY_MESSAGE = 'The repository is temporarily read-only. Please try again later.';

export type ContainerType = 'project' | 'group' | 'snippet';

/** GitLab's numbers for a move's states. */
export const MOVE_STATES = {
  initial: 1,
  scheduled: 2,
  started: 3,
  finished: 4,
  failed: 5,
  replicated: 6,
  cleanup_failed: 7,
} as const;

export type MoveStateName = keyof typeof MOVE_STATES;

export const moveStateName = (value: number): MoveStateName =>
  (Object.keys(MOVE_STATES) as MoveStateName[]).find((name) => MOVE_STATES[name] === value) ?? 'initial';

/** SQL: the container's repository is being moved (its move is scheduled or started). */
export const IN_PROGRESS_SQL = `state IN (${MOVE_STATES.scheduled}, ${MOVE_STATES.started})`;

export class RepositoryWriteGate {
  private readonly writers = new Map<string, number>();

  /** Whether the container's repository is read-only now. */
  async readOnly(manager: EntityManager, type: ContainerType, id: number): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `SELECT 1 FROM repository_storage_moves
       WHERE container_type = $1 AND container_id = $2 AND ${IN_PROGRESS_SQL} LIMIT 1`,
      [type, id],
    );
    return rows.length > 0;
  }

  /** Counts a writer in; `leave` must follow, whatever happens. */
  enter(type: ContainerType, id: number): () => void {
    const key = `${type}:${id}`;
    this.writers.set(key, (this.writers.get(key) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const count = (this.writers.get(key) ?? 1) - 1;
      if (count > 0) this.writers.set(key, count);
      else this.writers.delete(key);
    };
  }

  /** Runs `write` as a counted writer, refused with `refusal()` when the repository is read-only. */
  async write<T>(
    manager: EntityManager,
    type: ContainerType,
    id: number,
    refusal: () => Error,
    write: () => Promise<T>,
  ): Promise<T> {
    const leave = this.enter(type, id);
    try {
      if (await this.readOnly(manager, type, id)) throw refusal();
      return await write();
    } finally {
      leave();
    }
  }

  /** Waits until no writer of this process is at work on the container; false after `timeoutMs`. */
  async drained(type: ContainerType, id: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.writers.has(`${type}:${id}`)) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return true;
  }
}
