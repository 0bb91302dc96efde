import type { EntityManager } from 'typeorm';

/**
 * Hands out the next per-project internal id for `usage` (merge_requests, pipelines, ...).
 * One atomic upsert: concurrent creates each get a distinct value, with no gap-free guarantee
 * needed beyond that (as in GitLab).
 */
export async function nextInternalId(
  manager: EntityManager,
  projectId: number,
  usage: string,
): Promise<number> {
  const rows: Array<{ last_value: number }> = await manager.query(
    `INSERT INTO internal_ids (project_id, usage, last_value) VALUES ($1, $2, 1)
     ON CONFLICT (project_id, usage) DO UPDATE SET last_value = internal_ids.last_value + 1
     RETURNING last_value`,
    [projectId, usage],
  );
  return rows[0].last_value;
}
