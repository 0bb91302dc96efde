/**
 * The extension point other families use to follow jobs (`ciJobChanges`): environments make and move
 * deployments as their jobs do. Observers run in the transaction of the change, so what they write
 * commits or rolls back with it; they must stay cheap (they see every job that moves).
 */
import type { EntityManager } from 'typeorm';
import type { Contributions } from '../core/family.js';
import type { Job } from './pipeline.entity.js';

export interface JobChangesObserver {
  /** Jobs just created (status `created`) or whose status just changed, as saved. */
  jobsChanged(manager: EntityManager, jobs: readonly Job[]): Promise<void>;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    ciJobChanges: JobChangesObserver;
  }
}

/** Tells every observer; nothing to do for no jobs. */
export async function announceJobChanges(
  contributions: Contributions,
  manager: EntityManager,
  jobs: readonly Job[],
): Promise<void> {
  if (jobs.length === 0) return;
  for (const observer of contributions.of('ciJobChanges')) await observer.jobsChanged(manager, jobs);
}
