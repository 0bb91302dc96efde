/**
 * The runner lists (the caller's, all, a project's, a group's) and their filters, in SQL: one page query
 * and one count, ordered by id (newest first) on the primary key.
 */
import type { DataSource, SelectQueryBuilder } from 'typeorm';
import { directGroupMembershipsSql, projectMembershipSql } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';
import { badParameter } from '../core/errors.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import { Runner, RUNNER_TYPES } from './runner.entity.js';

/** GitLab's timeouts: online within 2 hours of the last contact; stale after 7 days. */
export const ONLINE_SECONDS = 2 * 60 * 60;
export const STALE_SECONDS = 7 * 24 * 60 * 60;
const ONLINE_SQL = `r.contacted_at > now() - interval '${ONLINE_SECONDS} seconds'`;
const STALE_DEADLINE = `now() - interval '${STALE_SECONDS} seconds'`;

export interface RunnerFilters extends PageParams {
  scope?: string;
  type?: string;
  paused?: boolean;
  status?: string;
  tag_list?: string | string[];
  version_prefix?: string;
}

const SCOPES: Record<string, string> = {
  active: 'r.active',
  paused: 'NOT r.active',
  online: ONLINE_SQL,
  offline: `r.contacted_at <= now() - interval '${ONLINE_SECONDS} seconds'`,
  never_contacted: 'r.contacted_at IS NULL',
  stale: `r.created_at <= ${STALE_DEADLINE} AND (r.contacted_at IS NULL OR r.contacted_at <= ${STALE_DEADLINE})`,
  specific: `r.runner_type <> 'instance_type'`,
  shared: `r.runner_type = 'instance_type'`,
  ...Object.fromEntries(RUNNER_TYPES.map((type) => [type, `r.runner_type = '${type}'`])),
};

/** Tags given as an array or comma-separated, trimmed, without blanks or repeats. */
export function tagsOf(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const list = (Array.isArray(value) ? value : [value]).flatMap((item) => String(item).split(','));
  return [...new Set(list.map((tag) => tag.trim()).filter(Boolean))];
}

function applyFilters(query: SelectQueryBuilder<Runner>, params: RunnerFilters): SelectQueryBuilder<Runner> {
  for (const key of ['scope', 'type', 'status'] as const) {
    const value = params[key];
    if (value === undefined) continue;
    const condition = SCOPES[value];
    if (!condition) throw badParameter('Scope contains invalid value');
    query.andWhere(condition);
  }
  if (params.paused !== undefined) query.andWhere(params.paused ? SCOPES.paused : SCOPES.active);
  const tags = tagsOf(params.tag_list);
  if (tags?.length) query.andWhere('r.tag_list @> CAST(:tags AS jsonb)', { tags: JSON.stringify(tags) });
  if (params.version_prefix !== undefined) {
    if (!/^[\d+.]+/.test(params.version_prefix)) throw badParameter('version_prefix is invalid');
    const prefix = params.version_prefix.replace(/[\\%_]/g, (c) => `\\${c}`);
    query.andWhere(`r.info->>'version' LIKE :prefix`, { prefix: `${prefix}%` });
  }
  return query;
}

export class RunnerLists {
  constructor(private readonly dataSource: DataSource) {}

  private base() {
    return this.dataSource.getRepository(Runner).createQueryBuilder('r').orderBy('r.id', 'DESC');
  }

  private page(query: SelectQueryBuilder<Runner>, params: RunnerFilters, request: RequestInfo) {
    return paginateOffset(applyFilters(query, params), params, request);
  }

  /**
   * GitLab's `ci_owned_runners`: project runners of projects the caller maintains, group runners of
   * groups (and their subgroups) the caller owns.
   */
  owned(caller: Caller, params: RunnerFilters, request: RequestInfo): Promise<Page<Runner>> {
    const query = this.base().where(
      `(r.id IN (SELECT rp.runner_id FROM ci_runner_projects rp
          JOIN projects p ON p.id = rp.project_id JOIN namespaces pn ON pn.id = p.namespace_id
          WHERE ${projectMembershipSql('p', 'pn', true)})
        OR r.id IN (SELECT rn.runner_id FROM ci_runner_namespaces rn
          JOIN namespaces g ON g.id = rn.namespace_id
          WHERE g.traversal_ids && ARRAY(${directGroupMembershipsSql('ownerLevel')})))`,
      {
        callerId: caller.user?.id ?? 0,
        minAccess: AccessLevel.Maintainer,
        ownerLevel: AccessLevel.Owner,
      },
    );
    return this.page(query, params, request);
  }

  all(params: RunnerFilters, request: RequestInfo): Promise<Page<Runner>> {
    return this.page(this.base(), params, request);
  }

  /** A project's runners, its group's and ancestors' group runners, and the instance runners. */
  project(projectId: number, traversalIds: number[], params: RunnerFilters, request: RequestInfo) {
    const query = this.base().where(
      `(r.runner_type = 'instance_type'
        OR r.id IN (SELECT runner_id FROM ci_runner_projects WHERE project_id = :projectId)
        OR r.id IN (SELECT runner_id FROM ci_runner_namespaces WHERE namespace_id = ANY(CAST(:groups AS int[]))))`,
      { projectId, groups: traversalIds },
    );
    return this.page(query, params, request);
  }

  /** A group's runners and its ancestors', and the instance runners. */
  group(traversalIds: number[], params: RunnerFilters, request: RequestInfo) {
    const query = this.base().where(
      `(r.runner_type = 'instance_type'
        OR r.id IN (SELECT runner_id FROM ci_runner_namespaces WHERE namespace_id = ANY(CAST(:groups AS int[]))))`,
      { groups: traversalIds },
    );
    return this.page(query, params, request);
  }
}

/** GitLab's REST `status` of a runner. */
export function runnerStatus(
  runner: Runner,
  now = Date.now(),
): 'online' | 'offline' | 'stale' | 'never_contacted' | 'paused' {
  const contacted = runner.contactedAt?.getTime() ?? null;
  const staleDeadline = now - STALE_SECONDS * 1000;
  if (runner.createdAt.getTime() <= staleDeadline && (contacted === null || contacted <= staleDeadline))
    return 'stale';
  if (contacted === null) return 'never_contacted';
  if (!runner.active) return 'paused';
  return isOnline(runner, now) ? 'online' : 'offline';
}

export const isOnline = (runner: Runner, now = Date.now()) =>
  runner.contactedAt !== null && runner.contactedAt.getTime() > now - ONLINE_SECONDS * 1000;
