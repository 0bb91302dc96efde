/**
 * The plan limit schedules are bounded by, behind one function: the plan limits service (`planLimits`,
 * branch s25-vars) is not on this branch yet, so GitLab's default plan's value stands in; its arrival
 * is a change here only.
 */
import type { EntityManager } from 'typeorm';

/** GitLab's `default` plan: ten schedules per project (0 would mean no limit). */
export const DEFAULT_CI_PIPELINE_SCHEDULES = 10;

export interface ScheduleLimitSource {
  current?(manager?: EntityManager): Promise<{ ci_pipeline_schedules?: number }>;
}

export async function pipelineScheduleLimit(
  source: ScheduleLimitSource | undefined,
  manager?: EntityManager,
) {
  const limits = source?.current ? await source.current(manager) : undefined;
  return limits?.ci_pipeline_schedules ?? DEFAULT_CI_PIPELINE_SCHEDULES;
}
