/**
 * What one caller may do to one runner, after GitLab's runner policy: the runner's owner (the instance,
 * its group, or its first project) decides who administers it; Maintainers of a runner's other projects
 * read and edit it; any signed-in user reads an instance runner. Levels come from the abilities the
 * family declares (`admin_runners`, `read_group_runners`...), never compared by hand.
 */
import type { EntityManager } from 'typeorm';
import {
  canGroup,
  canProject,
  groupSubject,
  isAdmin,
  projectAccessLevels,
  type Subject,
} from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { forbidden } from '../core/errors.js';
import type { Runner } from './runner.entity.js';

export interface RunnerAccess {
  read: boolean;
  /** Edit, reset its token, read its jobs (GitLab's `update_runner`). */
  update: boolean;
  /** Its owner administers it (GitLab's `can_admin_runner`). */
  admin: boolean;
  delete: boolean;
  /** Enable it in another project (GitLab's `assign_runner`). */
  assign: boolean;
  readJobs: boolean;
  /** The runner's projects, owner first. */
  projectIds: number[];
}

/** The projects a runner serves, owner first, and its group, in one query. */
export async function runnerScopes(
  manager: EntityManager,
  runnerId: number,
): Promise<{ projectIds: number[]; groupId: number | null }> {
  const rows: Array<{ project_ids: number[] | null; group_id: number | null }> = await manager.query(
    `SELECT ARRAY(SELECT project_id FROM ci_runner_projects WHERE runner_id = $1
                  ORDER BY created_at, project_id) AS project_ids,
            (SELECT namespace_id FROM ci_runner_namespaces WHERE runner_id = $1 LIMIT 1) AS group_id`,
    [runnerId],
  );
  return { projectIds: (rows[0]?.project_ids ?? []).map(Number), groupId: rows[0]?.group_id ?? null };
}

/** A project as the abilities see it, for the caller; null when it does not exist. */
export async function projectSubjectOf(
  manager: EntityManager,
  caller: Caller,
  projectIds: number[],
): Promise<Map<number, Subject>> {
  const subjects = new Map<number, Subject>();
  if (projectIds.length === 0) return subjects;
  const rows: Array<{ id: number; visibility_level: number; archived: boolean }> = await manager.query(
    'SELECT id, visibility_level, archived FROM projects WHERE id = ANY($1::int[])',
    [projectIds],
  );
  const levels = await projectAccessLevels(manager, caller, projectIds);
  for (const row of rows) {
    const access = levels.get(Number(row.id));
    subjects.set(Number(row.id), {
      visibilityLevel: row.visibility_level,
      accessLevel: access?.level ?? 0,
      archived: row.archived,
      ...(access?.memberRolePermissions ? { memberRolePermissions: access.memberRolePermissions } : {}),
    });
  }
  return subjects;
}

/** A group as the abilities see it, for the caller; null when it does not exist. */
export async function groupSubjectOf(
  manager: EntityManager,
  caller: Caller,
  groupId: number,
): Promise<Subject | null> {
  const rows: Array<{ id: number; traversal_ids: number[]; visibility_level: number }> = await manager.query(
    `SELECT id, traversal_ids, visibility_level FROM namespaces WHERE id = $1 AND kind = 'group'`,
    [groupId],
  );
  const row = rows[0];
  if (!row) return null;
  return groupSubject(manager, caller, {
    id: Number(row.id),
    traversalIds: row.traversal_ids.map(Number),
    visibilityLevel: row.visibility_level,
  });
}

export async function runnerAccess(
  manager: EntityManager,
  caller: Caller,
  runner: Runner,
): Promise<RunnerAccess> {
  const { projectIds, groupId } = await runnerScopes(manager, runner.id);
  const admin = isAdmin(caller);
  const several = projectIds.length > 1;
  let owns = admin;
  let reads = admin || runner.runnerType === 'instance_type';
  let maintainsAny = false;
  let groupReader = false;
  if (!admin && runner.runnerType === 'project_type') {
    const subjects = await projectSubjectOf(manager, caller, projectIds);
    const owner = subjects.get(projectIds[0]);
    owns = owner !== undefined && canProject(caller, 'admin_runners', owner);
    maintainsAny = projectIds.some((id) => {
      const subject = subjects.get(id);
      return subject !== undefined && canProject(caller, 'read_project_runners', subject);
    });
    reads = owns || maintainsAny;
  } else if (!admin && runner.runnerType === 'group_type' && groupId !== null) {
    const subject = await groupSubjectOf(manager, caller, groupId);
    owns = subject !== null && canGroup(caller, 'admin_runners', subject);
    groupReader = subject !== null && canGroup(caller, 'read_group_runners', subject);
    reads = owns || groupReader;
  }
  // A project runner enabled in several projects: their Maintainers share it (GitLab's `runner_available`).
  const shared = runner.runnerType === 'project_type' && several && maintainsAny;
  const update = owns || shared;
  return {
    read: reads,
    update,
    admin: owns,
    delete: admin || (owns && !several),
    assign: update && (admin || !runner.locked),
    readJobs: update || groupReader,
    projectIds,
  };
}

/** GitLab's refusals for the users' runner API, in its words. */
export const noAccess = () => forbidden('No access granted');
