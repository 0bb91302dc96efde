/**
 * Writing resource events, inside the transaction that makes the change. Merge requests import this
 * module only (not the family's service, which reads merge requests), so the services stay acyclic.
 */
import type { EntityManager } from 'typeorm';
import type { EventState } from './resource-event.entity.js';

/** Who changed a merge request, and when. */
export interface EventOrigin {
  mergeRequestId: number;
  userId: number | null;
  at: Date;
}

/** One `add` per label gained and one `remove` per label lost, in id order. */
export async function recordLabelChanges(
  tx: EntityManager,
  origin: EventOrigin,
  before: Iterable<number>,
  after: Iterable<number>,
): Promise<void> {
  const old = new Set(before);
  const next = new Set(after);
  const added = [...next].filter((id) => !old.has(id)).sort((a, b) => a - b);
  const removed = [...old].filter((id) => !next.has(id)).sort((a, b) => a - b);
  const rows = [...added.map((id) => [id, 'add'] as const), ...removed.map((id) => [id, 'remove'] as const)];
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO resource_label_events (merge_request_id, user_id, created_at, label_id, action)
     SELECT $1, $2, $3, label_id, action
     FROM unnest($4::int[], $5::varchar[]) WITH ORDINALITY AS t(label_id, action, ord) ORDER BY ord`,
    [
      origin.mergeRequestId,
      origin.userId,
      origin.at,
      rows.map(([id]) => id),
      rows.map(([, action]) => action),
    ],
  );
}

/**
 * One event per change, as GitLab's ChangeMilestoneService records it: `add` naming the new milestone
 * (a change from one to another included), or `remove` naming the old one when the milestone is unset.
 */
export async function recordMilestoneChange(
  tx: EntityManager,
  origin: EventOrigin,
  before: number | null,
  after: number | null,
): Promise<void> {
  if (before === after) return;
  await tx.query(
    `INSERT INTO resource_milestone_events (merge_request_id, user_id, created_at, milestone_id, action)
     VALUES ($1, $2, $3, $4, $5)`,
    [origin.mergeRequestId, origin.userId, origin.at, after ?? before, after === null ? 'remove' : 'add'],
  );
}

export async function recordStateChange(
  tx: EntityManager,
  origin: EventOrigin,
  state: EventState,
): Promise<void> {
  await tx.query(
    `INSERT INTO resource_state_events (merge_request_id, user_id, created_at, state) VALUES ($1, $2, $3, $4)`,
    [origin.mergeRequestId, origin.userId, origin.at, state],
  );
}
