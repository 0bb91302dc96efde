import type { EntityManager, SelectQueryBuilder, ObjectLiteral } from 'typeorm';
import type { Caller } from './auth.js';
import { AccessLevel } from '../members/member.entity.js';

export const Visibility = { private: 0, internal: 10, public: 20 } as const;
export type VisibilityName = keyof typeof Visibility;

export const visibilityName = (level: number): VisibilityName =>
  level >= Visibility.public ? 'public' : level >= Visibility.internal ? 'internal' : 'private';

export const isAdmin = (caller: Caller) => caller.user?.admin === true;

/**
 * SQL for the caller's highest access level on a project row (`projectAlias`) in a namespace row
 * (`namespaceAlias`): direct project membership, or membership of the namespace or any ancestor.
 * Expired memberships do not count. `:callerId` must be bound.
 */
export function accessLevelSql(projectAlias: string, namespaceAlias: string): string {
  return `COALESCE((SELECT max(m.access_level) FROM members m
    WHERE m.user_id = :callerId AND (m.expires_at IS NULL OR m.expires_at > current_date)
      AND ((m.source_type = 'Project' AND m.source_id = ${projectAlias}.id)
        OR (m.source_type = 'Namespace' AND m.source_id = ANY(${namespaceAlias}.traversal_ids)))), 0)`;
}

/**
 * SQL true when the caller (`:callerId`) is a member of the project, directly or through its namespace
 * or an ancestor, at `:minAccess` or above when `withMinimum`. The subqueries do not depend on the
 * row, so PostgreSQL computes each once per query instead of once per project.
 */
export function projectMembershipSql(
  projectAlias: string,
  namespaceAlias: string,
  withMinimum = false,
): string {
  const memberships = (type: string) => `SELECT m.source_id FROM members m
      WHERE m.user_id = :callerId AND m.source_type = '${type}'
        AND (m.expires_at IS NULL OR m.expires_at > current_date)${withMinimum ? ' AND m.access_level >= :minAccess' : ''}`;
  return `(${projectAlias}.id IN (${memberships('Project')})
    OR ${namespaceAlias}.traversal_ids && ARRAY(${memberships('Namespace')}))`;
}

/** Restricts a project query to what the caller may see. */
export function whereProjectVisible<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  caller: Caller,
  projectAlias: string,
  namespaceAlias: string,
): SelectQueryBuilder<T> {
  const user = caller.user;
  if (!user)
    return query.andWhere(`${projectAlias}.visibility_level = :publicLevel`, {
      publicLevel: Visibility.public,
    });
  if (user.admin) return query;
  const minimum = user.external ? Visibility.public : Visibility.internal;
  return query.andWhere(
    `(${projectAlias}.visibility_level >= :minimumVisible OR ${projectMembershipSql(projectAlias, namespaceAlias)})`,
    { minimumVisible: minimum, callerId: user.id },
  );
}

export interface ProjectAccess {
  /** Highest of the two: the level that decides what the caller may do. */
  level: number;
  /** Direct project membership. */
  project: number;
  /** Membership inherited from the namespace or an ancestor group. */
  group: number;
}

/** The caller's access to one project (0 for none). */
export async function projectAccess(
  manager: EntityManager,
  caller: Caller,
  project: { id: number; namespaceId: number },
): Promise<ProjectAccess> {
  if (!caller.user) return { level: AccessLevel.NoAccess, project: 0, group: 0 };
  const rows: Array<{ project: number; group: number }> = await manager.query(
    `SELECT
       COALESCE(max(m.access_level) FILTER (WHERE m.source_type = 'Project'), 0) AS project,
       COALESCE(max(m.access_level) FILTER (WHERE m.source_type = 'Namespace'), 0) AS group
     FROM members m, namespaces n
     WHERE n.id = $2 AND m.user_id = $3 AND (m.expires_at IS NULL OR m.expires_at > current_date)
       AND ((m.source_type = 'Project' AND m.source_id = $1)
         OR (m.source_type = 'Namespace' AND m.source_id = ANY(n.traversal_ids)))`,
    [project.id, project.namespaceId, caller.user.id],
  );
  const direct = Number(rows[0]?.project ?? 0);
  const inherited = Number(rows[0]?.group ?? 0);
  return { level: Math.max(direct, inherited), project: direct, group: inherited };
}

/** The caller's access to a group through membership of it or of an ancestor (0 for none). */
export async function groupAccessLevel(
  manager: EntityManager,
  caller: Caller,
  group: { traversalIds: number[] },
): Promise<number> {
  if (!caller.user) return AccessLevel.NoAccess;
  const rows: Array<{ level: number }> = await manager.query(
    `SELECT COALESCE(max(access_level), 0) AS level FROM members
     WHERE source_type = 'Namespace' AND source_id = ANY($1::int[]) AND user_id = $2
       AND (expires_at IS NULL OR expires_at > current_date)`,
    [group.traversalIds, caller.user.id],
  );
  return Number(rows[0]?.level ?? 0);
}

/** Visibility alone, given the caller's access level: may the caller see the project at all? */
export function canReadProject(caller: Caller, visibilityLevel: number, accessLevel: number): boolean {
  if (visibilityLevel >= Visibility.public) return true;
  const user = caller.user;
  if (!user) return false;
  if (user.admin || accessLevel > 0) return true;
  return visibilityLevel >= Visibility.internal && !user.external;
}

/** Reporter and above, or an administrator. */
export const canReadStatistics = (caller: Caller, accessLevel: number) =>
  isAdmin(caller) || accessLevel >= AccessLevel.Reporter;

/** Maintainer and above, or an administrator. */
export const canAdminProject = (caller: Caller, accessLevel: number) =>
  isAdmin(caller) || accessLevel >= AccessLevel.Maintainer;
