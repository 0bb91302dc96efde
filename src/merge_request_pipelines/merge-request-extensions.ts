/**
 * What pipelines add to merge requests, through the merge requests family's extension points: the
 * `head_pipeline` and `pipeline` fields, and the merge checks `ci_still_running` and `ci_must_pass`.
 * Both read the head pipeline beside each page, in the page's one statement.
 */
import type { DataSource } from 'typeorm';
import type { Config } from '../config.js';
import { entityRows } from '../db/rows.js';
import type { MergeCheck, MergeCheckInput, MergeRequestFields } from '../merge_requests/extension-points.js';
import { Pipeline } from '../pipelines/pipeline.entity.js';
import { presentPipeline, presentPipelineBasic } from '../pipelines/pipeline.presenter.js';
import { COMPLETED_STATUSES } from '../pipelines/statuses.js';
import type { User } from '../users/user.entity.js';
import { headPipelineSql } from './merge-request-pipelines.sql.js';

/** A head pipeline as the page selects it: the row, its user's row, its project's path, its warnings. */
type HeadRow = [Record<string, unknown>, Record<string, unknown> | null, string, boolean];

const headPipelinesSql = (
  ids: string,
) => `(SELECT json_agg(json_build_array(mr.id, json_build_array(row_to_json(hp),
    (SELECT json_build_object('id', u.id, 'name', u.name, 'username', u.username, 'state', u.state)
      FROM users u WHERE u.id = hp.user_id),
    (SELECT n.full_path || '/' || pr.path FROM projects pr JOIN namespaces n ON n.id = pr.namespace_id
      WHERE pr.id = hp.project_id),
    EXISTS (SELECT 1 FROM ci_builds b WHERE b.pipeline_id = hp.id AND NOT b.retried AND b.allow_failure
      AND b.status IN ('failed', 'canceled')))))
  FROM merge_requests mr JOIN LATERAL ${headPipelineSql('mr')} hp ON true WHERE mr.id = ANY(${ids}))`;

/** `head_pipeline` (detail) and `pipeline` (basic): the head pipeline, or null. */
export function headPipelineFields(dataSource: DataSource, config: Config): MergeRequestFields {
  let rows: ReturnType<typeof entityRows<Pipeline>> | undefined;
  return {
    data: ({ all }) => headPipelinesSql(all),
    present: (_mr, data) => {
      if (!data) return { head_pipeline: null, pipeline: null };
      const [row, userRow, fullPath, warnings] = data as HeadRow;
      rows ??= entityRows(dataSource, Pipeline, 'p');
      const pipeline = rows.fromJson(row);
      const ctx = { fullPath, externalUrl: config.externalUrl };
      const user = userRow ? ({ ...userRow } as unknown as User) : null;
      return {
        head_pipeline: presentPipeline(pipeline, { ...ctx, user, warnings }),
        pipeline: presentPipelineBasic(pipeline, ctx),
      };
    },
  };
}

/**
 * GitLab's `diff_head_pipeline_considered_in_progress?` where pipelines must succeed: a head pipeline that
 * has not completed (created, pending, running, manual, scheduled…) is still running.
 */
const inProgress = (status: string | undefined) =>
  status !== undefined && !(COMPLETED_STATUSES as readonly string[]).includes(status);

const headStatusSql = (ids: string) => `(SELECT json_agg(json_build_array(mr.id, hp.status))
  FROM merge_requests mr JOIN LATERAL ${headPipelineSql('mr')} hp ON true WHERE mr.id = ANY(${ids}))`;

/** The head pipeline's status: undefined when there is none. */
const headStatus = (data: unknown) => data as string | undefined;

const required = ({ project }: MergeCheckInput) => project.settings.only_allow_merge_if_pipeline_succeeds;

/** GitLab's `mergeable_ci_state?`: the head pipeline succeeded, or was skipped where that is allowed. */
function passed(input: MergeCheckInput): boolean {
  const status = headStatus(input.data);
  return (
    status === 'success' || (status === 'skipped' && input.project.settings.allow_merge_on_skipped_pipeline)
  );
}

/** `ci_still_running` and `ci_must_pass`, GitLab's CI check as its two reported outcomes. */
export const pipelineMergeChecks: readonly MergeCheck[] = [
  {
    name: 'ci_still_running',
    message: 'Pipeline must be completed',
    precedence: 60,
    reported: true,
    blocksMerge: true,
    data: ({ open }) => headStatusSql(open),
    status: (input) => {
      if (!required(input)) return 'inactive';
      return inProgress(headStatus(input.data)) ? 'failed' : 'success';
    },
  },
  {
    name: 'ci_must_pass',
    message: 'Pipeline must succeed',
    precedence: 61,
    reported: true,
    blocksMerge: true,
    data: ({ open }) => headStatusSql(open),
    status: (input) => {
      if (!required(input)) return 'inactive';
      if (inProgress(headStatus(input.data))) return 'success';
      return passed(input) ? 'success' : 'failed';
    },
  },
];
