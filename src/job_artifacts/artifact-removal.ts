/**
 * Removing artifacts: rows first (in a transaction, with the project's `job_artifacts_size`), then their
 * objects, so that no object is served without its row; an object whose removal failed is only an
 * orphan the object store's sweep finds. Expired artifacts go unless their pipeline is the latest
 * successful one of its ref (GitLab's "keep artifacts from the most recent successful jobs").
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { ObjectStore } from '../core/object-store.js';
import type { Logger } from '../logger.js';
import { JobArtifact } from './job-artifact.entity.js';

/** The project's total artifact size into its statistics (and the storage size built from it). */
export async function updateArtifactStatistics(manager: EntityManager, projectId: number): Promise<void> {
  await manager.query(
    `WITH total AS (SELECT COALESCE(sum(size), 0) AS size FROM ci_job_artifacts WHERE project_id = $1)
     UPDATE project_statistics SET job_artifacts_size = total.size,
       storage_size = repository_size + lfs_objects_size + total.size + pipeline_artifacts_size
         + packages_size + snippets_size + uploads_size + wiki_size
     FROM total WHERE project_id = $1`,
    [projectId],
  );
}

/** The pipelines whose artifacts are kept: each ref's latest successful pipeline and its children. */
const LOCKED_PIPELINES = `
  WITH RECURSIVE latest AS (
    SELECT DISTINCT ON (ref, tag) id FROM ci_pipelines
    WHERE project_id = $1 AND status = 'success' AND source <> 'parent_pipeline'
    ORDER BY ref, tag, created_at DESC, id DESC
  ), locked AS (
    SELECT id FROM latest
    UNION ALL SELECT p.id FROM ci_pipelines p JOIN locked l ON p.parent_pipeline_id = l.id
  )`;

/** The rows of a `RETURNING` clause: TypeORM answers `[rows, count]` for an UPDATE or a DELETE. */
function returned<T>(result: unknown): T[] {
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  )
    return result[0] as T[];
  return result as T[];
}

export class ArtifactRemoval {
  constructor(
    private readonly dataSource: DataSource,
    private readonly store: ObjectStore,
    private readonly logger: Logger,
  ) {}

  /** Deletes the rows in `manager`'s transaction; answers the keys to remove once it commits. */
  async deleteRows(manager: EntityManager, projectId: number, ids: readonly number[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = returned<{ object_key: string }>(
      await manager.query(
        'DELETE FROM ci_job_artifacts WHERE project_id = $1 AND id = ANY($2) RETURNING object_key',
        [projectId, ids],
      ),
    );
    await updateArtifactStatistics(manager, projectId);
    return rows.map((row) => row.object_key);
  }

  /** Removes objects whose rows are gone; a failure leaves orphans for the store's sweep. */
  async deleteObjects(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.store.delete(keys).catch((err: unknown) => {
      this.logger.warn({ err, count: keys.length }, 'job artifact objects were not removed');
    });
  }

  /** Every artifact of a job but its log (GitLab keeps `trace`); used by delete and erase. */
  async removeForJob(projectId: number, jobId: number): Promise<number> {
    const keys = await this.dataSource.transaction(async (manager) => {
      const rows = await manager.find(JobArtifact, { select: { id: true }, where: { projectId, jobId } });
      return this.deleteRows(
        manager,
        projectId,
        rows.map((row) => row.id),
      );
    });
    await this.deleteObjects(keys);
    return keys.length;
  }

  /** Sets every deletable artifact of the project to expire now (the locked ones are left as they are). */
  async expireAllNow(manager: EntityManager, projectId: number): Promise<number> {
    const result: unknown = await manager.query(
      `${LOCKED_PIPELINES}
       UPDATE ci_job_artifacts a SET expire_at = now()
       FROM ci_builds b
       WHERE a.project_id = $1 AND b.id = a.job_id AND a.file_type <> 'trace'
         AND b.pipeline_id NOT IN (SELECT id FROM locked)
       RETURNING a.id`,
      [projectId],
    );
    return returned(result).length;
  }

  /** Removes the project's expired, unlocked artifacts, a batch at a time; answers how many went. */
  async removeExpired(projectId: number, batch = 500): Promise<number> {
    let removed = 0;
    for (;;) {
      const keys = await this.dataSource.transaction(async (manager) => {
        const rows: Array<{ id: number }> = await manager.query(
          `${LOCKED_PIPELINES}
           SELECT a.id FROM ci_job_artifacts a JOIN ci_builds b ON b.id = a.job_id
           WHERE a.project_id = $1 AND a.expire_at <= now() AND a.file_type <> 'trace'
             AND b.pipeline_id NOT IN (SELECT id FROM locked)
           ORDER BY a.id LIMIT $2 FOR UPDATE OF a SKIP LOCKED`,
          [projectId, batch],
        );
        return this.deleteRows(
          manager,
          projectId,
          rows.map((row) => row.id),
        );
      });
      await this.deleteObjects(keys);
      removed += keys.length;
      if (keys.length < batch) return removed;
    }
  }

  /** A deleted project's objects (its rows went with it). */
  async removeProjectObjects(projectId: number): Promise<void> {
    const keys: string[] = [];
    for await (const object of this.store.list(`artifacts/${projectId}/`)) keys.push(object.key);
    for (let i = 0; i < keys.length; i += 1000) await this.store.delete(keys.slice(i, i + 1000));
  }
}
