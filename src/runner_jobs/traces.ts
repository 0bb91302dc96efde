/**
 * Runners' live logs: each `PATCH /jobs/:id/trace` body is one row of `ci_build_trace_chunks` (one
 * insert, whatever the log's size), its offset checked against `ci_builds.trace_size` in the same
 * statement that advances it. When the job ends the chunks become one object in the object store
 * (`traces/<project>/<job>/job.log`) and the rows go.
 */
import { Readable } from 'node:stream';
import type { DataSource, EntityManager } from 'typeorm';
import type { ObjectStore } from '../core/object-store.js';
import type { JobTraceStore } from '../pipelines/job-traces.js';
import type { Job } from '../pipelines/pipeline.entity.js';

export const traceKey = (projectId: number, jobId: number) => `traces/${projectId}/${jobId}/job.log`;

export class Traces implements JobTraceStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly store: ObjectStore,
  ) {}

  /** The log's size so far. */
  async size(jobId: number, manager: EntityManager = this.dataSource.manager): Promise<number> {
    const rows: Array<{ trace_size: string }> = await manager.query(
      'SELECT trace_size FROM ci_builds WHERE id = $1',
      [jobId],
    );
    return Number(rows[0]?.trace_size ?? 0);
  }

  /**
   * Appends `data` at `start`: the new size, or `{ resumeAt }` (the current size) when `start` is not
   * where the log ends.
   */
  async append(jobId: number, start: number, data: Buffer): Promise<number | { resumeAt: number }> {
    // One statement: the offset check, the size, the runner's last word and the chunk commit together.
    const rows: Array<{ trace_size: string }> = await this.dataSource.query(
      `WITH u AS (UPDATE ci_builds SET trace_size = trace_size + $3, runner_updated_at = now()
                  WHERE id = $1 AND trace_size = $2 AND trace_object IS NULL RETURNING trace_size),
            c AS (INSERT INTO ci_build_trace_chunks (build_id, start_offset, data)
                  SELECT $1, $2, $4::bytea FROM u WHERE $3 > 0)
       SELECT trace_size FROM u`,
      [jobId, start, data.length, data],
    );
    if (rows.length === 0) return { resumeAt: await this.size(jobId) };
    return Number(rows[0].trace_size);
  }

  private async chunks(jobId: number, manager: EntityManager = this.dataSource.manager): Promise<Buffer> {
    const rows: Array<{ data: Buffer | Uint8Array }> = await manager.query(
      'SELECT data FROM ci_build_trace_chunks WHERE build_id = $1 ORDER BY start_offset',
      [jobId],
    );
    return Buffer.concat(rows.map((row) => Buffer.from(row.data)));
  }

  async read(job: Job): Promise<Buffer | null> {
    const rows: Array<{ trace_size: string; trace_object: string | null }> = await this.dataSource.query(
      'SELECT trace_size, trace_object FROM ci_builds WHERE id = $1',
      [job.id],
    );
    const row = rows[0];
    if (!row) return null;
    if (row.trace_object) {
      const stream = await this.store.get(row.trace_object);
      if (!stream) return null;
      const parts: Buffer[] = [];
      for await (const part of stream) parts.push(Buffer.from(part as Buffer));
      return Buffer.concat(parts);
    }
    if (Number(row.trace_size) === 0) return null;
    return this.chunks(job.id);
  }

  /**
   * Moves a finished job's chunks into the object store; nothing to do when there are none. The build's
   * row stays locked meanwhile, so that two archivers (the runner's last update, the queue) never race.
   */
  async archive(jobId: number): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const rows: Array<{ project_id: number; trace_size: string; trace_object: string | null }> =
        await manager.query(
          'SELECT project_id, trace_size, trace_object FROM ci_builds WHERE id = $1 FOR UPDATE',
          [jobId],
        );
      const row = rows[0];
      if (!row || row.trace_object || Number(row.trace_size) === 0) return;
      const key = traceKey(row.project_id, jobId);
      await this.store.putStream(key, Readable.from([await this.chunks(jobId, manager)]));
      try {
        await manager.query('UPDATE ci_builds SET trace_object = $2 WHERE id = $1', [jobId, key]);
        await manager.query('DELETE FROM ci_build_trace_chunks WHERE build_id = $1', [jobId]);
      } catch (err) {
        await this.store.delete([key]).catch(() => undefined);
        throw err;
      }
    });
  }

  async erase(manager: EntityManager, job: Job): Promise<boolean> {
    const rows: Array<{ trace_size: string; trace_object: string | null }> = await manager.query(
      `SELECT trace_size, trace_object FROM ci_builds WHERE id = $1 FOR UPDATE`,
      [job.id],
    );
    const row = rows[0];
    if (!row || Number(row.trace_size) === 0) return false;
    await manager.query('DELETE FROM ci_build_trace_chunks WHERE build_id = $1', [job.id]);
    await manager.query('UPDATE ci_builds SET trace_size = 0, trace_object = NULL WHERE id = $1', [job.id]);
    if (row.trace_object) await this.store.delete([row.trace_object]);
    return true;
  }
}
