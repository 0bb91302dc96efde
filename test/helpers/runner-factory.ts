/** Runners for tests, as rows with a token digest, until runners are created through the API everywhere. */
import type { DataSource } from 'typeorm';
import { generateToken, hashToken } from '../../src/core/auth.js';
import { Runner, RunnerNamespace, RunnerProject } from '../../src/runners/runner.entity.js';

export interface RunnerAttrs {
  type?: 'instance_type' | 'group_type' | 'project_type';
  projectIds?: number[];
  groupId?: number;
  tags?: string[];
  runUntagged?: boolean;
  active?: boolean;
  locked?: boolean;
  accessLevel?: 'not_protected' | 'ref_protected';
  maximumTimeout?: number | null;
  description?: string;
}

/** A runner and its `glrt-` authentication token. */
export async function createRunner(
  dataSource: DataSource,
  attrs: RunnerAttrs = {},
): Promise<{ runner: Runner; token: string }> {
  const token = generateToken('glrt-');
  const now = new Date();
  const type =
    attrs.type ?? (attrs.projectIds ? 'project_type' : attrs.groupId ? 'group_type' : 'instance_type');
  const runner = await dataSource.manager.save(
    dataSource.manager.create(Runner, {
      runnerType: type,
      tokenDigest: hashToken(token),
      tokenExpiresAt: null,
      registrationType: 'authenticated_user',
      creatorId: null,
      description: attrs.description ?? 'test runner',
      active: attrs.active ?? true,
      locked: attrs.locked ?? false,
      runUntagged: attrs.runUntagged ?? true,
      tagList: attrs.tags ?? [],
      accessLevel: attrs.accessLevel ?? 'not_protected',
      maximumTimeout: attrs.maximumTimeout ?? null,
      maintenanceNote: null,
      info: {},
      createdAt: now,
      updatedAt: now,
    }),
  );
  for (const projectId of attrs.projectIds ?? [])
    await dataSource.manager.insert(RunnerProject, { runnerId: runner.id, projectId, createdAt: now });
  if (attrs.groupId !== undefined)
    await dataSource.manager.insert(RunnerNamespace, { runnerId: runner.id, namespaceId: attrs.groupId });
  return { runner, token };
}
