/**
 * What the runner_jobs family offers others, fixed before its implementation so that artifacts, reports
 * and the runner can be built beside it: the reach of a CI job token, the variable shape of the job
 * payload, and the `runnerJobPayload` point through which other families add to a job's payload.
 */
import type { EntityManager } from 'typeorm';
import type { CallerReach } from '../core/auth.js';
import type { Job } from '../pipelines/pipeline.entity.js';

/** A job variable as the runner receives it (GitLab's `variables` item of the job payload). */
export interface RunnerVariable {
  key: string;
  value: string;
  public: boolean;
  masked: boolean;
  /** A file variable: the runner writes the value to a file and sets the key to its path. */
  file?: boolean;
  /** Not expanded by the runner (`raw: true`). */
  raw?: boolean;
}

/**
 * A job token's reach: it acts as the job's user, only while the job runs, on the job's project and the
 * projects whose job token scope allows the job's project. Its `check` is given by the runner_jobs family.
 */
export interface JobTokenReach extends CallerReach {
  readonly kind: 'ci_job_token';
  readonly jobId: number;
  readonly pipelineId: number;
  readonly projectId: number;
  readonly userId: number;
}

export const isJobTokenReach = (reach: CallerReach | undefined): reach is JobTokenReach =>
  reach?.kind === 'ci_job_token';

/** A family's additions to the payload `POST /jobs/request` hands a runner. */
export interface RunnerJobPayloadExtension {
  /** Variables after the job's own, e.g. the dotenv reports of the jobs it depends on (lowest precedence first). */
  variables?(manager: EntityManager, job: Job, dependencies: readonly Job[]): Promise<RunnerVariable[]>;
  /** The archive a dependency's artifacts are downloaded as (`dependencies[].artifacts_file`); null: none. */
  artifactsFile?(manager: EntityManager, dependency: Job): Promise<{ filename: string; size: number } | null>;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    runnerJobPayload: RunnerJobPayloadExtension;
  }
}
