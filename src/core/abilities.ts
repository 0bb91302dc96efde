import type { EntityManager, SelectQueryBuilder, ObjectLiteral } from 'typeorm';
import type { Caller } from './auth.js';
import { AccessLevel } from '../members/member.entity.js';

export const Visibility = { private: 0, internal: 10, public: 20 } as const;
export type VisibilityName = keyof typeof Visibility;

export const visibilityName = (level: number): VisibilityName =>
  level >= Visibility.public ? 'public' : level >= Visibility.internal ? 'internal' : 'private';

export const isAdmin = (caller: Caller) => caller.user?.admin === true;

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

const NO_ACCESS: ProjectAccess = { level: AccessLevel.NoAccess, project: 0, group: 0 };

/** The caller's access to many projects in one query; projects missing from the map give no access. */
export async function projectAccessLevels(
  manager: EntityManager,
  caller: Caller,
  projectIds: number[],
): Promise<Map<number, ProjectAccess>> {
  const levels = new Map<number, ProjectAccess>();
  if (!caller.user || projectIds.length === 0) return levels;
  const rows: Array<{ id: number; project: number; group: number }> = await manager.query(
    `SELECT p.id,
       COALESCE(max(m.access_level) FILTER (WHERE m.source_type = 'Project'), 0) AS project,
       COALESCE(max(m.access_level) FILTER (WHERE m.source_type = 'Namespace'), 0) AS group
     FROM projects p
     JOIN namespaces n ON n.id = p.namespace_id
     JOIN members m ON m.user_id = $2 AND (m.expires_at IS NULL OR m.expires_at > current_date)
       AND ((m.source_type = 'Project' AND m.source_id = p.id)
         OR (m.source_type = 'Namespace' AND m.source_id = ANY(n.traversal_ids)))
     WHERE p.id = ANY($1::int[])
     GROUP BY p.id`,
    [projectIds, caller.user.id],
  );
  for (const row of rows) {
    const project = Number(row.project);
    const group = Number(row.group);
    levels.set(Number(row.id), { level: Math.max(project, group), project, group });
  }
  return levels;
}

/** The caller's access to one project. */
export async function projectAccess(
  manager: EntityManager,
  caller: Caller,
  project: { id: number },
): Promise<ProjectAccess> {
  return (await projectAccessLevels(manager, caller, [project.id])).get(project.id) ?? NO_ACCESS;
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
