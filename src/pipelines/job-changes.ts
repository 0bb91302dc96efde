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
  jobsChanged?(manager: EntityManager, jobs: readonly Job[]): Promise<void>;
  /** A job was erased (its log removed): what else of it is to go goes too (its artifacts). */
  jobErased?(manager: EntityManager, job: Job): Promise<void>;
}

/**
 * The `jobFields` point: attributes other families add to a job's representation (its artifacts, its
 * runner), read for a whole page of jobs at once.
 */
export interface JobFieldsExtension {
  fieldsFor(jobs: readonly Job[]): Promise<Map<number, Record<string, unknown>>>;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    ciJobChanges: JobChangesObserver;
    jobFields: JobFieldsExtension;
  }
}

/** Tells every observer; nothing to do for no jobs. */
export async function announceJobChanges(
  contributions: Contributions,
  manager: EntityManager,
  jobs: readonly Job[],
): Promise<void> {
  if (jobs.length === 0) return;
  for (const observer of contributions.of('ciJobChanges')) await observer.jobsChanged?.(manager, jobs);
}

/** Tells every observer that a job was erased. */
export async function announceJobErased(
  contributions: Contributions,
  manager: EntityManager,
  job: Job,
): Promise<void> {
  for (const observer of contributions.of('ciJobChanges')) await observer.jobErased?.(manager, job);
}

/** The other families' attributes of each job, by job id (later contributions win). */
export async function jobFieldsOf(
  contributions: Contributions,
  jobs: readonly Job[],
): Promise<Map<number, Record<string, unknown>>> {
  const merged = new Map<number, Record<string, unknown>>();
  if (jobs.length === 0) return merged;
  for (const fields of await Promise.all(contributions.of('jobFields').map((x) => x.fieldsFor(jobs))))
    for (const [id, values] of fields) merged.set(id, { ...merged.get(id), ...values });
  return merged;
}
