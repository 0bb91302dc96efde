/**
 * Moving a pipeline along (GitLab's Ci::PipelineProcessing::AtomicProcessingService): each created job
 * whose prerequisites (the stages before it, or its `needs`) are complete is enqueued, made manual,
 * scheduled or skipped as its `when` says; resource groups let one job through at a time; then the
 * stages' and the pipeline's composite statuses, times and coverage follow the jobs.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { Events } from '../core/events.js';
import { Job, Pipeline, PipelineStage, type CiStatus } from './pipeline.entity.js';
import './pipelines.events.js';
import type { Contributions } from '../core/family.js';
import { announceJobChanges } from './job-changes.js';
import {
  ACTIVE_STATUSES,
  CANCELABLE_STATUSES,
  COMPLETED_STATUSES,
  composite,
  type StatusOf,
} from './statuses.js';

/** Jobs move on only from these prerequisite statuses. */
const VALID_AFTER: Record<Job['when'], { stages: CiStatus[]; dag: CiStatus[] }> = {
  on_success: { stages: ['success', 'skipped'], dag: ['success'] },
  manual: { stages: ['success', 'skipped'], dag: ['success'] },
  delayed: { stages: ['success', 'skipped'], dag: ['success'] },
  on_failure: { stages: ['failed'], dag: ['failed'] },
  always: { stages: ['success', 'failed', 'skipped'], dag: ['success', 'failed', 'skipped'] },
};

const UNITS: Record<string, number> = {
  s: 1,
  sec: 1,
  second: 1,
  m: 60,
  min: 60,
  minute: 60,
  h: 3600,
  hr: 3600,
  hour: 3600,
  d: 86400,
  day: 86400,
  w: 604800,
  week: 604800,
};

/** `start_in` ("30 minutes", "1 day 2 hours", "10"): seconds. */
export function durationSeconds(text: string): number {
  let total = 0;
  for (const [, amount, unit] of text.toLowerCase().matchAll(/(\d+(?:\.\d+)?)\s*([a-z]*)/g)) {
    const key = unit.replace(/s$/, '');
    total += Number(amount) * (unit === '' ? 1 : (UNITS[key] ?? UNITS[unit] ?? 0));
  }
  return Math.round(total);
}

/** Whether a job is one of those `need` names: itself, or one of its parallel copies. */
export function matchesNeed(jobName: string, need: string): boolean {
  return (
    jobName === need ||
    (jobName.startsWith(`${need} `) && /^\d+\/\d+$/.test(jobName.slice(need.length + 1))) ||
    jobName.startsWith(`${need}: [`)
  );
}

export class PipelineProcessing {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: Events,
    private readonly contributions: Contributions,
  ) {}

  /** Jobs that were created or changed status: the families that follow jobs hear of them. */
  announce(manager: EntityManager, jobs: readonly Job[]): Promise<void> {
    return announceJobChanges(this.contributions, manager, jobs);
  }

  /** Runs in `manager`'s transaction, or a transaction of its own. */
  process(pipelineId: number, manager?: EntityManager): Promise<void> {
    if (manager) return this.processIn(manager, pipelineId);
    return this.dataSource.transaction((tx) => this.processIn(tx, pipelineId));
  }

  private async processIn(manager: EntityManager, pipelineId: number): Promise<void> {
    // One processor per pipeline at a time: the row lock serializes concurrent job updates.
    const pipeline = await manager
      .getRepository(Pipeline)
      .createQueryBuilder('p')
      .setLock('pessimistic_write')
      .where('p.id = :pipelineId', { pipelineId })
      .getOne();
    if (!pipeline) return;
    const jobs = await manager.find(Job, {
      where: { pipelineId, retried: false },
      order: { stageIdx: 'ASC', id: 'ASC' },
    });
    const now = new Date();
    const changed = new Map<number, Job>();
    let moved = true;
    while (moved) {
      moved = false;
      for (const job of jobs) {
        if (job.status !== 'created') continue;
        const next = this.nextStatus(job, jobs);
        if (!next) continue;
        this.apply(job, next, now);
        changed.set(job.id, job);
        moved = true;
      }
    }
    // `workflow:auto_cancel:on_job_failure: all`: a failure that is not allowed cancels the rest.
    if (
      pipeline.autoCancelOnJobFailure === 'all' &&
      jobs.some((job) => job.status === 'failed' && !job.allowFailure)
    )
      for (const job of jobs)
        if (CANCELABLE_STATUSES.includes(job.status)) {
          job.status = 'canceled';
          job.finishedAt = now;
          changed.set(job.id, job);
        }
    for (const job of await this.assignResources(manager, jobs, now)) changed.set(job.id, job);
    await this.saveJobs(manager, [...changed.values()], now);
    await this.updateStatuses(manager, pipeline, jobs, now);
  }

  /** What a created job becomes now, or null while its prerequisites are not complete. */
  private nextStatus(job: Job, jobs: Job[]): CiStatus | null {
    const dag = job.needs !== null;
    const prior: StatusOf[] = dag
      ? jobs.filter((other) =>
          job.needs!.some((need) => !need.pipeline && !need.project && matchesNeed(other.name, need.name)),
        )
      : jobs.filter((other) => other.stageIdx < job.stageIdx);
    const status = composite(prior, dag).status ?? 'success';
    if (!COMPLETED_STATUSES.includes(status)) return null;
    if (!VALID_AFTER[job.when][dag ? 'dag' : 'stages'].includes(status)) return 'skipped';
    if (job.when === 'manual') return 'manual';
    if (job.when === 'delayed') return 'scheduled';
    return job.resourceGroupId !== null ? 'waiting_for_resource' : 'pending';
  }

  private apply(job: Job, status: CiStatus, now: Date): void {
    job.status = status;
    job.updatedAt = now;
    if (status === 'pending') job.queuedAt = now;
    if (status === 'skipped') job.finishedAt = null;
    if (status === 'scheduled')
      job.scheduledAt = new Date(now.getTime() + durationSeconds(job.startIn ?? '0') * 1000);
  }

  /** Lets the first waiting job of each free resource group through. */
  private async assignResources(manager: EntityManager, jobs: Job[], now: Date): Promise<Job[]> {
    const released: Job[] = [];
    const taken = new Set<number>();
    for (const job of jobs) {
      if (job.status !== 'waiting_for_resource' || job.resourceGroupId === null) continue;
      if (taken.has(job.resourceGroupId)) continue;
      taken.add(job.resourceGroupId);
      const [{ busy }] = (await manager.query(
        `SELECT EXISTS (SELECT 1 FROM ci_builds WHERE resource_group_id = $1 AND id <> $2
           AND status IN ('preparing', 'pending', 'running')) AS busy`,
        [job.resourceGroupId, job.id],
      )) as Array<{ busy: boolean }>;
      if (busy) continue;
      this.apply(job, 'pending', now);
      released.push(job);
    }
    return released;
  }

  /** Writes the jobs that moved, one statement per status; schedules what follows each. */
  async saveJobs(manager: EntityManager, jobs: Job[], now: Date): Promise<void> {
    const byStatus = new Map<CiStatus, Job[]>();
    for (const job of jobs) byStatus.set(job.status, [...(byStatus.get(job.status) ?? []), job]);
    await this.announce(manager, jobs);
    for (const [status, group] of byStatus) {
      const ids = group.map((job) => job.id);
      if (status === 'scheduled') {
        for (const job of group) {
          await manager.update(Job, job.id, { status, scheduledAt: job.scheduledAt, updatedAt: now });
          await this.events.publish(
            manager,
            'ci.job_delay_elapsed',
            { jobId: job.id },
            { startAfter: job.scheduledAt! },
          );
        }
        continue;
      }
      await manager.query(
        `UPDATE ci_builds SET status = $1::varchar, updated_at = $2::timestamptz,
           queued_at = CASE WHEN $1::varchar = 'pending' THEN $2::timestamptz ELSE queued_at END,
           finished_at = CASE WHEN $1::varchar = 'canceled' THEN $2::timestamptz ELSE finished_at END
         WHERE id = ANY($3::int[])`,
        [status, now, ids],
      );
      if (status === 'pending')
        for (const job of group)
          if (job.type === 'bridge')
            await this.events.publish(manager, 'ci.bridge_trigger_requested', { jobId: job.id });
    }
  }

  /** The stages' and the pipeline's statuses and times from their jobs'. */
  async updateStatuses(manager: EntityManager, pipeline: Pipeline, jobs: Job[], now: Date): Promise<void> {
    const stages = await manager.find(PipelineStage, { where: { pipelineId: pipeline.id } });
    for (const stage of stages) {
      const status = composite(jobs.filter((job) => job.stage === stage.name)).status ?? 'skipped';
      if (status !== stage.status) await manager.update(PipelineStage, stage.id, { status });
    }
    const status = composite(jobs).status ?? 'skipped';
    const started = jobs.map((job) => job.startedAt).filter((date): date is Date => date !== null);
    const finished = COMPLETED_STATUSES.includes(status);
    const startedAt =
      pipeline.startedAt ??
      (started.length > 0 ? new Date(Math.min(...started.map((d) => d.getTime()))) : null);
    const coverages = jobs.map((job) => job.coverage).filter((value): value is string => value !== null);
    const patch: Partial<Pipeline> = {
      status,
      startedAt,
      finishedAt: finished ? (pipeline.finishedAt ?? now) : null,
      duration: finished ? runningSeconds(jobs, now) : null,
      queuedDuration: startedAt
        ? Math.max(0, Math.round((startedAt.getTime() - pipeline.createdAt.getTime()) / 1000))
        : null,
      coverage: coverages.length
        ? (coverages.reduce((sum, value) => sum + Number(value), 0) / coverages.length).toFixed(2)
        : null,
    };
    const differs = (Object.keys(patch) as Array<keyof Pipeline>).some(
      (key) => String(patch[key] ?? null) !== String(pipeline[key] ?? null),
    );
    if (!differs) return;
    const statusChanged = status !== pipeline.status;
    Object.assign(pipeline, patch, { updatedAt: now });
    await manager.update(Pipeline, pipeline.id, { ...patch, updatedAt: now });
    if (!statusChanged) return;
    await this.events.publish(manager, 'ci.pipeline_status_changed', { pipelineId: pipeline.id, status });
    if (pipeline.upstreamJobId !== null)
      await this.events.publish(manager, 'ci.downstream_status_changed', { pipelineId: pipeline.id });
  }

  /** Pipelines with jobs waiting for a resource group, to process after it is released. */
  async waitingOn(manager: EntityManager, resourceGroupId: number): Promise<number[]> {
    const rows = (await manager.query(
      `SELECT DISTINCT pipeline_id FROM ci_builds WHERE resource_group_id = $1 AND status = 'waiting_for_resource'`,
      [resourceGroupId],
    )) as Array<{ pipeline_id: number }>;
    return rows.map((row) => row.pipeline_id);
  }
}

/** Seconds the jobs ran, overlapping runs counted once (GitLab's pipeline duration). */
export function runningSeconds(jobs: Job[], now: Date): number | null {
  const periods = jobs
    .filter((job) => job.startedAt !== null)
    .map((job) => [job.startedAt!.getTime(), (job.finishedAt ?? now).getTime()] as const)
    .sort((a, b) => a[0] - b[0]);
  if (periods.length === 0) return null;
  let total = 0;
  let [start, end] = periods[0];
  for (const [s, e] of periods.slice(1)) {
    if (s > end) {
      total += end - start;
      [start, end] = [s, e];
    } else end = Math.max(end, e);
  }
  total += end - start;
  return Math.round(total / 1000);
}

export const isActive = (status: CiStatus) => ACTIVE_STATUSES.includes(status);
