/**
 * Per-user sets of project ids (those whose merge requests a caller may read, those a caller is a member
 * of), stored in `readable_project_sets` and used only while they are still true.
 *
 * Every committed change to what decides access (members, shares, custom roles, projects' and groups'
 * visibility, place and settings) moves `authorization_generation` (triggers, migration
 * 1767800200000); expiry moves with `current_date`. A stored set carries the generation and date it was
 * computed with (its stamp, from the same statement), and a statement uses it only when the stamp is
 * the one it reads itself, in its own snapshot; else it computes the set in place. A stale set is thus
 * never used, whatever process changed the data, and every process shares the stored sets. The sets
 * stay in the database, not in the process: sending thousands of ids with every statement costs more
 * than the database reading them. Any column the sets' SQL reads must be among those the triggers watch.
 */
import type { DataSource, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { Caller } from './auth.js';
import { projectMembershipSql, whereMergeRequestsReadable } from './abilities.js';

export type ReadableSet = 'merge_requests' | 'membership';

/** The set's query: ids of projects `p` (of namespace `n`), restricted as the set says. */
function setQuery(
  dataSource: DataSource,
  caller: Caller & { user: NonNullable<Caller['user']> },
  set: ReadableSet,
  groupId: number | undefined,
): SelectQueryBuilder<ObjectLiteral> {
  const query = dataSource
    .createQueryBuilder()
    .select('p.id')
    .from('projects', 'p')
    .innerJoin('namespaces', 'n', 'n.id = p.namespace_id');
  if (groupId !== undefined)
    query.where('n.traversal_ids @> ARRAY[CAST(:readableGroupId AS int)]', { readableGroupId: groupId });
  if (set === 'merge_requests') return whereMergeRequestsReadable(query, caller, 'p', 'n');
  return query.andWhere(projectMembershipSql('p', 'n'), { callerId: caller.user.id });
}

/** SQL for the generation and date a set is computed with, as one text. */
const STAMP_SQL = `(SELECT g.generation::text || ' ' || current_date::text FROM authorization_generation g)`;

export interface ReadableIds {
  /** The set as an int[] expression: the stored ids while they hold, else computed in the statement. */
  sql: string;
  /** Its named parameters (prefixed `readable`, apart from those of the abilities' SQL). */
  parameters: Record<string, unknown>;
  /** A boolean expression to select beside it: whether the stored set held. */
  heldSql: string;
  /** Given what `heldSql` read: stores the set afresh when the stored one did not hold. */
  settle(held: unknown): Promise<void>;
}

/**
 * The set for a signed-in caller (for `merge_requests`, one who is not an administrator: they read
 * all), from the stored sets.
 */
export function readableProjectIds(
  dataSource: DataSource,
  caller: Caller & { user: NonNullable<Caller['user']> },
  set: ReadableSet,
  groupId?: number,
): ReadableIds {
  const user = caller.user;
  // External users see fewer projects: the same user id under another flag is another set.
  const key = `${set}:${user.id}:${user.external ? 'x' : ''}:${groupId ?? ''}`;
  const query = setQuery(dataSource, caller, set, groupId);
  const stored = `(SELECT s.stamp, s.ids FROM readable_project_sets s WHERE s.key = CAST(:readableKey AS text))`;
  return {
    sql: `CAST((SELECT CASE WHEN s.stamp = ${STAMP_SQL} THEN s.ids ELSE ARRAY(${query.getQuery()}) END
      FROM (SELECT 1) one LEFT JOIN ${stored} s ON true) AS int[])`,
    parameters: { ...query.getParameters(), readableKey: key },
    heldSql: `COALESCE((SELECT s.stamp = ${STAMP_SQL} FROM ${stored} s), false)`,
    settle: async (held) => {
      if (held === true) return;
      const [sql, values] = dataSource.driver.escapeQueryWithParameters(
        `INSERT INTO readable_project_sets (key, stamp, ids)
         SELECT CAST(:readableKey AS text), ${STAMP_SQL}, ARRAY(${query.getQuery()})
         ON CONFLICT (key) DO UPDATE SET stamp = EXCLUDED.stamp, ids = EXCLUDED.ids`,
        { ...query.getParameters(), readableKey: key },
      );
      await dataSource.query(sql, values);
      // Sets of an older generation or day can never hold again.
      await dataSource.query(`DELETE FROM readable_project_sets WHERE stamp <> ${STAMP_SQL}`);
    },
  };
}

/** A set computed in the statement itself, for callers whose set is not stored (anonymous, administrators). */
export function uncachedIds(query: SelectQueryBuilder<ObjectLiteral>): ReadableIds {
  return {
    sql: `ARRAY(${query.getQuery()})`,
    parameters: query.getParameters(),
    heldSql: 'true',
    settle: async () => {},
  };
}
