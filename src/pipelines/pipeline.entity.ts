import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** GitLab's statuses of pipelines, stages and jobs. */
export const STATUSES = [
  'created',
  'waiting_for_resource',
  'preparing',
  'pending',
  'running',
  'success',
  'failed',
  'canceled',
  'skipped',
  'manual',
  'scheduled',
] as const;
export type CiStatus = (typeof STATUSES)[number];

export const PIPELINE_SOURCES = [
  'push',
  'web',
  'api',
  'trigger',
  'schedule',
  'merge_request_event',
  'pipeline',
  'parent_pipeline',
  'external',
] as const;
export type PipelineSource = (typeof PIPELINE_SOURCES)[number];

/** One pipeline of a project (`ci_pipelines`). */
@Entity({ name: 'ci_pipelines' })
export class Pipeline {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer' })
  iid: number;

  @Column({ type: 'varchar', length: 255 })
  ref: string;

  @Column({ type: 'varchar', length: 64 })
  sha: string;

  @Column({ type: 'varchar', length: 64, name: 'before_sha' })
  beforeSha: string;

  @Column({ type: 'boolean' })
  tag: boolean;

  @Column({ type: 'varchar', length: 32 })
  source: PipelineSource;

  @Column({ type: 'varchar', length: 32 })
  status: CiStatus;

  @Column({ type: 'varchar', length: 64, name: 'failure_reason', nullable: true })
  failureReason: string | null;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  @Column({ type: 'text', name: 'yaml_errors', nullable: true })
  yamlErrors: string | null;

  @Column({ type: 'integer', name: 'user_id', nullable: true })
  userId: number | null;

  @Column({ type: 'integer', name: 'merge_request_id', nullable: true })
  mergeRequestId: number | null;

  @Column({ type: 'integer', name: 'parent_pipeline_id', nullable: true })
  parentPipelineId: number | null;

  @Column({ type: 'integer', name: 'upstream_pipeline_id', nullable: true })
  upstreamPipelineId: number | null;

  @Column({ type: 'integer', name: 'upstream_job_id', nullable: true })
  upstreamJobId: number | null;

  @Column({ type: 'integer', name: 'trigger_id', nullable: true })
  triggerId: number | null;

  @Column({ type: 'integer', name: 'schedule_id', nullable: true })
  scheduleId: number | null;

  @Column({ type: 'integer', name: 'auto_canceled_by_id', nullable: true })
  autoCanceledById: number | null;

  /** `workflow:auto_cancel:on_new_commit`: `conservative` (null), `interruptible` or `none`. */
  @Column({ type: 'varchar', length: 16, name: 'auto_cancel_on_new_commit', nullable: true })
  autoCancelOnNewCommit: string | null;

  /** `workflow:auto_cancel:on_job_failure`: `none` (null) or `all`. */
  @Column({ type: 'varchar', length: 16, name: 'auto_cancel_on_job_failure', nullable: true })
  autoCancelOnJobFailure: string | null;

  @Column({ type: 'timestamptz', name: 'started_at', nullable: true })
  startedAt: Date | null;

  @Column({ type: 'timestamptz', name: 'finished_at', nullable: true })
  finishedAt: Date | null;

  @Column({ type: 'timestamptz', name: 'committed_at', nullable: true })
  committedAt: Date | null;

  @Column({ type: 'integer', nullable: true })
  duration: number | null;

  @Column({ type: 'integer', name: 'queued_duration', nullable: true })
  queuedDuration: number | null;

  /** numeric: read as a string by the driver. */
  @Column({ type: 'numeric', precision: 5, scale: 2, nullable: true })
  coverage: string | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

/** A stage of a pipeline, with its composite status. */
@Entity({ name: 'ci_stages' })
export class PipelineStage {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer', name: 'pipeline_id' })
  pipelineId: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'integer' })
  position: number;

  @Column({ type: 'varchar', length: 32 })
  status: CiStatus;
}

export type JobType = 'build' | 'bridge' | 'generic';
export type JobWhen = 'on_success' | 'on_failure' | 'always' | 'manual' | 'delayed';

/** A need as stored: the job it names and how. */
export interface StoredNeed {
  name: string;
  artifacts: boolean;
  optional: boolean;
  pipeline?: string;
  project?: string;
  ref?: string;
}

/** A job of a pipeline (`ci_builds`): a build, a bridge (trigger job) or an external commit status. */
@Entity({ name: 'ci_builds' })
export class Job {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 16 })
  type: JobType;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'integer', name: 'pipeline_id' })
  pipelineId: number;

  @Column({ type: 'integer', name: 'stage_id', nullable: true })
  stageId: number | null;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 255 })
  stage: string;

  @Column({ type: 'integer', name: 'stage_idx' })
  stageIdx: number;

  @Column({ type: 'varchar', length: 32 })
  status: CiStatus;

  @Column({ type: 'varchar', length: 64, name: 'failure_reason', nullable: true })
  failureReason: string | null;

  @Column({ type: 'varchar', length: 16 })
  when: JobWhen;

  @Column({ type: 'varchar', length: 64, name: 'start_in', nullable: true })
  startIn: string | null;

  @Column({ type: 'boolean', name: 'allow_failure' })
  allowFailure: boolean;

  /** Every keyword of the job for the runner (script, image, trigger...). */
  @Column({ type: 'jsonb' })
  options: Record<string, unknown>;

  @Column({ type: 'jsonb', name: 'yaml_variables' })
  yamlVariables: Record<string, string>;

  /** null: the job follows the stages; an array (maybe empty): the jobs it needs. */
  @Column({ type: 'jsonb', nullable: true })
  needs: StoredNeed[] | null;

  /** Variables given when a manual job is played, sealed. */
  @Column({ type: 'text', name: 'job_variables', nullable: true })
  jobVariables: string | null;

  @Column({ type: 'integer', name: 'resource_group_id', nullable: true })
  resourceGroupId: number | null;

  @Column({ type: 'boolean' })
  interruptible: boolean;

  /** A newer attempt of the same job exists. */
  @Column({ type: 'boolean' })
  retried: boolean;

  @Column({ type: 'integer', name: 'user_id', nullable: true })
  userId: number | null;

  /** The runner that picked the job (the runners family sets it). */
  @Column({ type: 'integer', name: 'runner_id', nullable: true })
  runnerId: number | null;

  @Column({ type: 'varchar', length: 255 })
  ref: string;

  @Column({ type: 'boolean' })
  tag: boolean;

  @Column({ type: 'varchar', length: 64 })
  sha: string;

  @Column({ type: 'integer', name: 'exit_code', nullable: true })
  exitCode: number | null;

  @Column({ type: 'text', nullable: true })
  trace: string | null;

  @Column({ type: 'timestamptz', name: 'erased_at', nullable: true })
  erasedAt: Date | null;

  @Column({ type: 'integer', name: 'erased_by_id', nullable: true })
  erasedById: number | null;

  @Column({ type: 'timestamptz', name: 'scheduled_at', nullable: true })
  scheduledAt: Date | null;

  @Column({ type: 'timestamptz', name: 'queued_at', nullable: true })
  queuedAt: Date | null;

  @Column({ type: 'timestamptz', name: 'started_at', nullable: true })
  startedAt: Date | null;

  @Column({ type: 'timestamptz', name: 'finished_at', nullable: true })
  finishedAt: Date | null;

  @Column({ type: 'double precision', nullable: true })
  duration: number | null;

  @Column({ type: 'numeric', precision: 5, scale: 2, nullable: true })
  coverage: string | null;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}

/** A variable given to one pipeline (API, trigger, schedule), its value sealed. */
@Entity({ name: 'ci_pipeline_variables' })
export class PipelineVariable {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'pipeline_id' })
  pipelineId: number;

  @Column({ type: 'varchar', length: 255 })
  key: string;

  @Column({ type: 'text', name: 'encrypted_value' })
  encryptedValue: string;

  @Column({ type: 'varchar', length: 16, name: 'variable_type' })
  variableType: 'env_var' | 'file';

  @Column({ type: 'boolean' })
  raw: boolean;
}

/** A project's resource group: at most one of its jobs runs at a time. */
@Entity({ name: 'ci_resource_groups' })
export class ResourceGroup {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'project_id' })
  projectId: number;

  @Column({ type: 'varchar', length: 255 })
  key: string;

  @Column({ type: 'varchar', length: 32, name: 'process_mode' })
  processMode: string;

  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
