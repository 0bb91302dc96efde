/** Events of the runner_jobs family, added to the catalog of src/core/events.ts. */

/** A running job's time (plus the grace period) is up: fail it if its runner went silent. */
export interface RunnerJobDeadline {
  jobId: number;
}

/** A job a runner held ended otherwise than by the runner (canceled): archive its log. */
export interface RunnerJobEnded {
  jobId: number;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'ci.runner_job_deadline': RunnerJobDeadline;
    'ci.runner_job_ended': RunnerJobEnded;
  }
}
