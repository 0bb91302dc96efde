/** `GET /runners/:id/jobs`: the jobs a runner picked, in projects the caller reads, one page in SQL. */
import type { EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import { isAdmin, projectMembershipSql, PRIVATE_CONTENT_READER } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import {
  offsetHeaders,
  pageWindow,
  type Page,
  type PageParams,
  type RequestInfo,
} from '../core/pagination.js';

type RunnerJobJson = components['schemas']['RunnerJob'];

export interface RunnerJobParams extends PageParams {
  status?: string;
  order_by?: 'id';
  sort?: 'asc' | 'desc';
}

interface Row {
  id: number;
  name: string;
  stage: string;
  status: string;
  ref: string;
  tag: boolean;
  allow_failure: boolean;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  pipeline_id: number;
  pipeline_ref: string;
  pipeline_sha: string;
  pipeline_status: string;
  project_id: number;
  project_name: string;
  project_path: string;
  full_path: string;
  full_name: string;
  total: string;
}

export async function listRunnerJobs(
  manager: EntityManager,
  caller: Caller,
  runnerId: number,
  params: RunnerJobParams,
  request: RequestInfo,
): Promise<Page<RunnerJobJson>> {
  const { page, perPage, offset } = pageWindow(params);
  const args: unknown[] = [runnerId];
  let where = `b.runner_id = $1 AND b.type = 'build'`;
  if (params.status) {
    args.push(params.status);
    where += ` AND b.status = $${args.length}`;
  }
  if (!isAdmin(caller)) {
    args.push(caller.user?.id ?? 0, PRIVATE_CONTENT_READER);
    const membership = projectMembershipSql('p', 'n', true)
      .replaceAll(':callerId', `$${args.length - 1}`)
      .replaceAll(':minAccess', `$${args.length}`);
    where += ` AND ${membership}`;
  }
  const from = `FROM ci_builds b JOIN projects p ON p.id = b.project_id JOIN namespaces n ON n.id = p.namespace_id`;
  const direction = params.sort === 'asc' ? 'ASC' : 'DESC';
  const rows: Row[] = await manager.query(
    `SELECT b.id, b.name, b.stage, b.status, b.ref, b.tag, b.allow_failure, b.created_at, b.started_at,
       b.finished_at, pl.id AS pipeline_id, pl.ref AS pipeline_ref, pl.sha AS pipeline_sha,
       pl.status AS pipeline_status, p.id AS project_id, p.name AS project_name, p.path AS project_path,
       n.full_path, n.full_name, count(*) OVER () AS total
     ${from} JOIN ci_pipelines pl ON pl.id = b.pipeline_id
     WHERE ${where}
     ORDER BY b.id ${direction} LIMIT ${perPage} OFFSET ${offset}`,
    args,
  );
  let total = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && offset > 0) {
    // Past the last page: the window function had no row to count on.
    const counted: Array<{ total: string }> = await manager.query(
      `SELECT count(*) AS total ${from} WHERE ${where}`,
      args,
    );
    total = Number(counted[0]?.total ?? 0);
  }
  return {
    items: rows.map((row) => present(row, request.externalUrl)),
    headers: offsetHeaders(total, page, perPage, request),
  };
}

function present(row: Row, externalUrl: string): RunnerJobJson {
  const projectPath = `${row.full_path}/${row.project_path}`;
  const started = row.started_at ? new Date(row.started_at) : null;
  const finished = row.finished_at ? new Date(row.finished_at) : null;
  return {
    id: Number(row.id),
    name: row.name,
    stage: row.stage,
    status: row.status,
    ref: row.ref,
    tag: row.tag,
    allow_failure: row.allow_failure,
    created_at: new Date(row.created_at).toISOString(),
    started_at: started?.toISOString() ?? null,
    finished_at: finished?.toISOString() ?? null,
    duration: started ? Math.max(0, ((finished ?? new Date()).getTime() - started.getTime()) / 1000) : null,
    pipeline: {
      id: Number(row.pipeline_id),
      project_id: Number(row.project_id),
      ref: row.pipeline_ref,
      sha: row.pipeline_sha,
      status: row.pipeline_status,
    },
    web_url: `${externalUrl}/${projectPath}/-/jobs/${row.id}`,
    project: {
      id: Number(row.project_id),
      name: row.project_name,
      name_with_namespace: `${row.full_name} / ${row.project_name}`,
      path: row.project_path,
      path_with_namespace: projectPath,
    },
  };
}
