import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../core/auth.js';
import { badParameter, notFound, recordNotFound, validationFailed } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { offsetHeaders, perPageOf, type RequestInfo } from '../core/pagination.js';
import { MOVE_STATES, type ContainerType } from './write-gate.js';
import { RepositoryStorageMove } from './repository-storage-move.entity.js';
import './repository-storage-moves.events.js';

/** The kinds of container this API moves. */
export type MovableType = ContainerType;

type PageParams = { page?: number; per_page?: number };

/**
 * GitLab's `Repository.pick_storage_shard` with its default weights (`default` 100, every storage added
 * later 0): forge-api has no weights setting, so the pick is always `default`.
 */
const PICKED_STORAGE = 'default';

const NO_EXTRA =
  'NULL AS c_project_path, NULL AS c_updated_at, NULL AS c_visibility_level, NULL AS c_project_id';

/** How many containers the bulk job schedules per statement. */
const BULK_BATCH = 100;

/** A move as lists show it, with what it moves. */
export interface MoveRecord {
  id: number;
  createdAt: Date;
  state: number;
  source: string;
  destination: string;
  container: {
    id: number;
    name: string;
    path: string;
    description: string | null;
    createdAt: Date;
    /** The full path, and for a project the full name (namespace / name); empty for a snippet. */
    fullPath: string;
    fullName: string;
    /** Snippets only: the full path of a project snippet's project. */
    projectPath: string | null;
    updatedAt: Date | null;
    visibilityLevel: number | null;
    projectId: number | null;
  };
}

/**
 * Per kind: the join that names each move's container (moves of deleted ones left out), and the
 * columns its presentation needs (c_name, c_path, c_full_path, c_full_name, and a snippet's own).
 */
const CONTAINER_SQL: Record<MovableType, { join: string; columns: string }> = {
  project: {
    join: 'JOIN projects c ON c.id = m.container_id JOIN namespaces n ON n.id = c.namespace_id',
    columns: `c.name AS c_name, c.path AS c_path, n.full_path || '/' || c.path AS c_full_path,
      n.full_name || ' / ' || c.name AS c_full_name, ${NO_EXTRA}`,
  },
  group: {
    join: `JOIN namespaces c ON c.id = m.container_id AND c.kind = 'group'`,
    columns: `c.name AS c_name, c.path AS c_path, c.full_path AS c_full_path, c.full_name AS c_full_name,
      ${NO_EXTRA}`,
  },
  snippet: {
    join: `JOIN snippets c ON c.id = m.container_id
      LEFT JOIN projects p ON p.id = c.project_id LEFT JOIN namespaces n ON n.id = p.namespace_id`,
    columns: `c.title AS c_name, '' AS c_path, '' AS c_full_path, '' AS c_full_name,
      n.full_path || '/' || p.path AS c_project_path, c.updated_at AS c_updated_at, c.visibility_level AS c_visibility_level,
      c.project_id AS c_project_id`,
  },
};

interface MoveRow {
  id: number;
  created_at: Date;
  state: number;
  source_storage_name: string;
  destination_storage_name: string;
  c_id: number;
  c_name: string;
  c_path: string;
  c_description: string | null;
  c_created_at: Date;
  c_full_path: string;
  c_full_name: string;
  c_project_path: string | null;
  c_updated_at: Date | null;
  c_visibility_level: number | null;
  c_project_id: number | null;
}

/**
 * Schedules and lists repository storage moves; the moving itself is the git layer's StorageMover,
 * run on the queue for each scheduled move.
 */
export class RepositoryStorageMovesService {
  private readonly dataSource: DataSource;
  private readonly events: Events;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<
      ServiceRegistry,
      'projects' | 'groups' | 'storage' | 'writeGate' | 'storageMover'
    >,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
  }

  /** The id of the project, group or snippet `id` names (an administrator sees every one). */
  async containerId(caller: Caller, type: MovableType, id: string | number): Promise<number> {
    if (type === 'project') return (await this.services.projects.find(caller, id)).project.id;
    if (type === 'group') return (await this.services.groups.find(caller, id)).group.id;
    // GitLab finds the snippet by id alone, whatever its project's settings.
    const [row] = (await this.dataSource.query('SELECT id FROM snippets WHERE id = $1', [id])) as unknown[];
    if (!row) throw notFound('Snippet');
    return Number(id);
  }

  async list(
    type: MovableType,
    containerId: number | null,
    params: PageParams,
    request: RequestInfo,
  ): Promise<{ items: MoveRecord[]; headers: Record<string, string> }> {
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const values: unknown[] = [type];
    const where = containerId === null ? '' : `AND m.container_id = $${values.push(containerId)}`;
    const from = `FROM repository_storage_moves m ${CONTAINER_SQL[type].join}
      WHERE m.container_type = $1 ${where}`;
    const [rows, [{ total }]] = await Promise.all([
      this.dataSource.query(
        `${select(type)} ${from} ORDER BY m.id DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`,
        values,
      ) as Promise<MoveRow[]>,
      this.dataSource.query(`SELECT count(*) AS total ${from}`, values) as Promise<[{ total: string }]>,
    ]);
    return { items: rows.map(toRecord), headers: offsetHeaders(Number(total), page, perPage, request) };
  }

  async get(
    type: MovableType,
    containerId: number | null,
    moveId: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<MoveRecord> {
    const values: unknown[] = [type, moveId];
    const where = containerId === null ? '' : `AND m.container_id = $${values.push(containerId)}`;
    const [row] = (await manager.query(
      `${select(type)} FROM repository_storage_moves m ${CONTAINER_SQL[type].join}
       WHERE m.container_type = $1 AND m.id = $2 ${where}`,
      values,
    )) as MoveRow[];
    if (!row) throw recordNotFound();
    return toRecord(row);
  }

  /**
   * Schedules a move of one container's repository from where it is now; the container is read-only
   * from the commit on. GitLab's validation errors: an unknown destination, a container already
   * read-only (being moved).
   */
  async schedule(type: MovableType, containerId: number, destination?: string): Promise<MoveRecord> {
    const target = destination ?? PICKED_STORAGE;
    if (!this.services.storage.has(target))
      throw validationFailed({ destination_storage_name: ['is not included in the list'] });
    // Read inside the transaction: the queue may start, or even finish, the move before the answer goes.
    const move = await this.scheduleMove(type, containerId, target, undefined, (tx, moveId) =>
      this.get(type, containerId, moveId, tx),
    );
    if (move === null) throw validationFailed({ [type]: ['is read-only'] });
    return move;
  }

  /** Asks for moves of every repository of a kind on `source`; a job schedules them. */
  async scheduleAll(type: MovableType, source: string, destination?: string): Promise<void> {
    if (!this.services.storage.has(source))
      throw badParameter('source_storage_name does not have a valid value');
    if (destination !== undefined && !this.services.storage.has(destination))
      throw badParameter('destination_storage_name does not have a valid value');
    await this.dataSource.transaction((tx) =>
      this.events.publish(tx, 'repository_storage_moves.requested', {
        containerType: type,
        source,
        destination: destination ?? PICKED_STORAGE,
      }),
    );
  }

  /**
   * The bulk job: a move for each container on `source`, in id order, one transaction each. Those
   * already being moved are skipped, as GitLab's bulk service skips invalid moves; safe to repeat.
   */
  async scheduleEach(type: MovableType, source: string, destination: string): Promise<void> {
    const container = this.services.storageMover.container(type);
    let after = 0;
    for (;;) {
      const ids = await container.onStorage(this.dataSource.manager, source, after, BULK_BATCH);
      for (const id of ids) await this.scheduleMove(type, id, destination, source);
      if (ids.length < BULK_BATCH) return;
      after = ids[ids.length - 1];
    }
  }

  /**
   * Inserts a scheduled move and its job in one transaction; null when the container is already being
   * moved (the partial unique index settles a race), gone, or (for the bulk job) no longer on `onlyFrom`.
   */
  private async scheduleMove<T = number>(
    type: MovableType,
    containerId: number,
    destination: string,
    onlyFrom?: string,
    scheduled: (tx: EntityManager, moveId: number) => Promise<T> = async (_tx, moveId) => moveId as T,
  ): Promise<T | null> {
    const container = this.services.storageMover.container(type);
    try {
      return await this.dataSource.transaction(async (tx) => {
        const location = await container.locate(tx, containerId);
        if (!location) return null;
        const source = location.storage ?? PICKED_STORAGE;
        if (onlyFrom !== undefined && source !== onlyFrom) return null;
        if (await this.services.writeGate.readOnly(tx, type, containerId)) return null;
        const move = await tx.getRepository(RepositoryStorageMove).save({
          containerType: type,
          containerId,
          state: MOVE_STATES.scheduled,
          sourceStorageName: source,
          destinationStorageName: destination,
        });
        await this.events.publish(tx, 'repository_storage_move.scheduled', { moveId: move.id });
        return scheduled(tx, move.id);
      });
    } catch (err) {
      if (
        (err as { code?: string }).code === '23505' ||
        /repository_storage_moves_in_progress/.test(String(err))
      )
        return null;
      throw err;
    }
  }
}

const select = (type: MovableType) =>
  `SELECT m.id, m.created_at, m.state, m.source_storage_name, m.destination_storage_name,
    c.id AS c_id, c.description AS c_description, c.created_at AS c_created_at,
    ${CONTAINER_SQL[type].columns}`;

function toRecord(row: MoveRow): MoveRecord {
  return {
    id: Number(row.id),
    createdAt: new Date(row.created_at),
    state: Number(row.state),
    source: row.source_storage_name,
    destination: row.destination_storage_name,
    container: {
      id: Number(row.c_id),
      name: row.c_name,
      path: row.c_path,
      description: row.c_description,
      createdAt: new Date(row.c_created_at),
      fullPath: row.c_full_path,
      fullName: row.c_full_name,
      projectPath: row.c_project_path,
      updatedAt: row.c_updated_at === null ? null : new Date(row.c_updated_at),
      visibilityLevel: row.c_visibility_level === null ? null : Number(row.c_visibility_level),
      projectId: row.c_project_id === null ? null : Number(row.c_project_id),
    },
  };
}
