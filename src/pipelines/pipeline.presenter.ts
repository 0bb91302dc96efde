import type { components } from '../../generated/openapi.js';
import type { GitCommit } from '../git/commits.js';
import type { User } from '../users/user.entity.js';
import { presentUserSummary } from '../users/user.presenter.js';
import type { Job, Pipeline } from './pipeline.entity.js';
import { faviconPath, shownJobStatus, shownPipelineStatus } from './statuses.js';

type Schemas = components['schemas'];
export type PipelineBasicJson = Schemas['PipelineBasic'];
export type PipelineJson = Schemas['Pipeline'];
export type JobJson = Schemas['Job'];
export type BridgeJson = Schemas['Bridge'];
export type PipelineVariableJson = Schemas['PipelineVariable'];

/** Where a pipeline's links point: its project's full path and the server's external URL. */
export interface PipelineContext {
  fullPath: string;
  externalUrl: string;
}

/** A pipeline in detail needs its user and whether allowed failures left warnings. */
export interface PipelineDetailContext extends PipelineContext {
  user: User | null;
  warnings: boolean;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export const pipelineWebUrl = (p: Pick<Pipeline, 'id'>, ctx: PipelineContext) =>
  `${ctx.externalUrl}/${ctx.fullPath}/-/pipelines/${p.id}`;
export const jobWebUrl = (job: Pick<Job, 'id'>, ctx: PipelineContext) =>
  `${ctx.externalUrl}/${ctx.fullPath}/-/jobs/${job.id}`;

export function presentPipelineBasic(p: Pipeline, ctx: PipelineContext): PipelineBasicJson {
  return {
    id: p.id,
    iid: p.iid,
    project_id: p.projectId,
    status: p.status,
    source: p.source,
    ref: p.ref,
    sha: p.sha,
    name: p.name,
    web_url: pipelineWebUrl(p, ctx),
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

export function presentPipeline(p: Pipeline, ctx: PipelineDetailContext): PipelineJson {
  const shown = shownPipelineStatus(p.status, ctx.warnings);
  return {
    ...presentPipelineBasic(p, ctx),
    before_sha: p.beforeSha,
    tag: p.tag,
    yaml_errors: p.yamlErrors,
    user: ctx.user ? presentUserSummary(ctx.user, ctx.externalUrl) : null,
    started_at: iso(p.startedAt),
    finished_at: iso(p.finishedAt),
    committed_at: iso(p.committedAt),
    duration: p.duration,
    queued_duration: p.queuedDuration,
    coverage: p.coverage === null ? null : String(Number(p.coverage).toFixed(1)),
    detailed_status: {
      ...shown,
      tooltip: shown.label,
      has_details: true,
      details_path: `/${ctx.fullPath}/-/pipelines/${p.id}`,
      illustration: null,
      favicon: faviconPath(shown.favicon),
    },
  };
}

/** What a job's representation reads besides the job. */
export interface JobContext extends PipelineContext {
  pipeline: Pipeline;
  user: User | null;
  commit: GitCommit | null;
  /** What other families add to the job (`jobFields`: its artifacts, its runner). */
  extra?: Record<string, unknown>;
}

function presentCommit(commit: GitCommit, ctx: PipelineContext): NonNullable<JobJson['commit']> {
  const title = commit.message.split('\n', 1)[0] ?? '';
  return {
    id: commit.id,
    short_id: commit.id.slice(0, 8),
    title,
    message: commit.message,
    author_name: commit.authorName,
    author_email: commit.authorEmail,
    authored_date: commit.authoredDate.toISOString(),
    committer_name: commit.committerName,
    committer_email: commit.committerEmail,
    committed_date: commit.committedDate.toISOString(),
    created_at: commit.committedDate.toISOString(),
    parent_ids: commit.parentIds,
    web_url: `${ctx.externalUrl}/${ctx.fullPath}/-/commit/${commit.id}`,
  };
}

const seconds = (from: Date | null, to: Date | null) =>
  from && to ? Math.max(0, (to.getTime() - from.getTime()) / 1000) : null;

function presentJobCommon(job: Job, ctx: JobContext) {
  const p = ctx.pipeline;
  return {
    id: job.id,
    name: job.name,
    stage: job.stage,
    status: job.status,
    ref: job.ref,
    tag: job.tag,
    coverage: job.coverage === null ? null : Number(job.coverage),
    allow_failure: job.allowFailure,
    created_at: job.createdAt.toISOString(),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
    erased_at: iso(job.erasedAt),
    duration: job.startedAt ? seconds(job.startedAt, job.finishedAt ?? new Date()) : null,
    queued_duration: job.queuedAt ? seconds(job.queuedAt, job.startedAt ?? new Date()) : null,
    ...(job.status === 'failed' ? { failure_reason: job.failureReason ?? 'unknown_failure' } : {}),
    user: ctx.user ? presentUserSummary(ctx.user, ctx.externalUrl) : null,
    commit: ctx.commit ? presentCommit(ctx.commit, ctx) : null,
    pipeline: {
      id: p.id,
      iid: p.iid,
      project_id: p.projectId,
      ref: p.ref,
      sha: p.sha,
      status: p.status,
      source: p.source,
      created_at: p.createdAt.toISOString(),
      updated_at: p.updatedAt.toISOString(),
      web_url: pipelineWebUrl(p, ctx),
    },
    web_url: jobWebUrl(job, ctx),
    project: { ci_job_token_scope_enabled: false },
  };
}

export function presentJob(job: Job, ctx: JobContext): JobJson {
  const tags = job.options.tags;
  return {
    ...presentJobCommon(job, ctx),
    when: job.when,
    artifacts: [],
    artifacts_expire_at: null,
    runner: null,
    runner_manager: null,
    tag_list: Array.isArray(tags) ? tags.map(String) : [],
    archived: false,
    ...(ctx.extra as Partial<JobJson> | undefined),
  };
}

export function presentBridge(
  job: Job,
  ctx: JobContext & { downstream: Pipeline | null; downstreamPath: string | null },
): BridgeJson {
  return {
    ...presentJobCommon(job, ctx),
    downstream_pipeline:
      ctx.downstream && ctx.downstreamPath
        ? presentPipelineBasic(ctx.downstream, { fullPath: ctx.downstreamPath, externalUrl: ctx.externalUrl })
        : null,
  };
}

/** A job's status as GitLab shows it (for the runner's and the UI's needs). */
export const jobDetailedStatus = (job: Job) => shownJobStatus(job.status, job.allowFailure);
