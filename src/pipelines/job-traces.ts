/**
 * The extension point through which the family that stores runners' live logs (runner_jobs: chunks
 * while the job runs, the object store once it ends) serves and erases them (`ciJobTraces`); the log
 * `appendTrace` writes on the build's row stays the fallback.
 */
import type { EntityManager } from 'typeorm';
import type { Job } from './pipeline.entity.js';

export interface JobTraceStore {
  /** The job's log as this store keeps it; null when it keeps none for the job. */
  read(job: Job): Promise<Buffer | null>;
  /** Removes the job's log, in the erase's transaction; answers whether there was one. */
  erase(manager: EntityManager, job: Job): Promise<boolean>;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    ciJobTraces: JobTraceStore;
  }
}
