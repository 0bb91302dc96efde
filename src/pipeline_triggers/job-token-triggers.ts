/**
 * The seam for CI job tokens on the trigger endpoint (`token` = a running job's `CI_JOB_TOKEN`): the
 * runners family, which issues job tokens, contributes a resolver to the `ciJobTokens` point; the trigger
 * then creates a multi-project pipeline (source `pipeline`) as the job's user, linked to the job's
 * pipeline as its upstream. Until a family contributes one, only trigger tokens start pipelines.
 *
 *     // in the runners manifest:
 *     contributes: { ciJobTokens: ({ jobs }) => ({ resolve: (token) => jobs.runningJobForToken(token) }) }
 */
import type { User } from '../users/user.entity.js';

/** The running job a job token stands for. */
export interface JobTokenJob {
  jobId: number;
  pipelineId: number;
  projectId: number;
  /** The job's user: the downstream pipeline runs as them. */
  user: User;
}

export interface JobTokenResolver {
  /** The running job whose token this is; null for any other string (including a finished job's token). */
  resolve(token: string): Promise<JobTokenJob | null>;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    ciJobTokens: JobTokenResolver;
  }
}
