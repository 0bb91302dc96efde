import type { EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import { isAdmin, isMemberLevel, projectAccessLevels } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { groupSubjectOf, type RunnerAccess } from './runner-access.js';
import { isOnline, runnerStatus } from './runner-lists.js';
import type { Runner } from './runner.entity.js';

type RunnerJson = components['schemas']['Runner'];
type RunnerDetailsJson = components['schemas']['RunnerDetails'];
type RunnerProjectJson = components['schemas']['RunnerProject'];
type RunnerGroupJson = components['schemas']['RunnerGroup'];

const infoText = (runner: Runner, key: string) => {
  const value = runner.info?.[key];
  return typeof value === 'string' ? value : null;
};

export function presentRunner(runner: Runner): RunnerJson {
  return {
    id: runner.id,
    description: runner.description,
    ip_address: runner.ipAddress,
    active: runner.active,
    paused: !runner.active,
    is_shared: runner.runnerType === 'instance_type',
    runner_type: runner.runnerType,
    name: infoText(runner, 'name'),
    online: isOnline(runner),
    status: runnerStatus(runner),
    created_at: runner.createdAt.toISOString(),
  };
}

/** The projects and groups of a runner that the caller belongs to (administrators: all). */
export interface RunnerRelations {
  projects: RunnerProjectJson[];
  groups: RunnerGroupJson[];
}

export async function loadRelations(
  manager: EntityManager,
  caller: Caller,
  runner: Runner,
  access: RunnerAccess,
  externalUrl: string,
): Promise<RunnerRelations> {
  let projectIds = access.projectIds;
  if (!isAdmin(caller) && projectIds.length) {
    const levels = await projectAccessLevels(manager, caller, projectIds);
    projectIds = projectIds.filter((id) => isMemberLevel(levels.get(id)?.level ?? 0));
  }
  const projects: Array<Record<string, unknown>> = projectIds.length
    ? await manager.query(
        `SELECT p.id, p.name, p.path, p.description, p.default_branch, p.created_at, n.full_path, n.full_name
         FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = ANY($1::int[]) ORDER BY p.id`,
        [projectIds],
      )
    : [];
  const groups: RunnerGroupJson[] = [];
  if (runner.runnerType === 'group_type') {
    const rows: Array<{ id: number; name: string; full_path: string }> = await manager.query(
      `SELECT n.id, n.name, n.full_path FROM ci_runner_namespaces rn JOIN namespaces n ON n.id = rn.namespace_id
       WHERE rn.runner_id = $1`,
      [runner.id],
    );
    for (const row of rows) {
      const subject = isAdmin(caller) ? null : await groupSubjectOf(manager, caller, Number(row.id));
      if (subject && !isMemberLevel(subject.accessLevel)) continue;
      groups.push({ id: Number(row.id), name: row.name, web_url: `${externalUrl}/groups/${row.full_path}` });
    }
  }
  return {
    projects: projects.map((row) => ({
      id: Number(row.id),
      description: (row.description as string | null) ?? null,
      name: row.name as string,
      name_with_namespace: `${row.full_name as string} / ${row.name as string}`,
      path: row.path as string,
      path_with_namespace: `${row.full_path as string}/${row.path as string}`,
      created_at: new Date(row.created_at as string).toISOString(),
      default_branch: (row.default_branch as string | null) ?? null,
      web_url: `${externalUrl}/${row.full_path as string}/${row.path as string}`,
    })),
    groups,
  };
}

export function presentRunnerDetails(
  runner: Runner,
  access: RunnerAccess,
  relations: RunnerRelations,
): RunnerDetailsJson {
  return {
    ...presentRunner(runner),
    tag_list: runner.tagList,
    run_untagged: runner.runUntagged,
    locked: runner.locked,
    maximum_timeout: runner.maximumTimeout,
    access_level: runner.accessLevel,
    version: infoText(runner, 'version'),
    revision: infoText(runner, 'revision'),
    platform: infoText(runner, 'platform'),
    architecture: infoText(runner, 'architecture'),
    contacted_at: runner.contactedAt?.toISOString() ?? null,
    ...(access.update ? { maintenance_note: runner.maintenanceNote } : {}),
    projects: relations.projects,
    groups: relations.groups,
  };
}
