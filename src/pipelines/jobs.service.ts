import { In, type DataSource, type EntityManager } from 'typeorm';
import { ApiError, badParameter, forbidden, recordNotFound } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { Contributions } from '../core/family.js';
import { type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import { paginateOffsetInOneStatement } from '../db/paged-rows.js';
import { preparedQuery } from '../db/prepared.js';
import { entityRows, type EntityRows } from '../db/rows.js';
import type { PipelineListCounts } from './list-counts.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { RepositoriesService } from '../repository/repositories.service.js';
import type { SecretBox } from '../remote_mirrors/secret-box.js';
import { User } from '../users/user.entity.js';
import { Job, Pipeline, type CiStatus, type JobType } from './pipeline.entity.js';
import type { JobContext, PipelineContext } from './pipeline.presenter.js';
import { PipelineProcessing, matchesNeed } from './pipeline-processing.js';
import { projectFullPath } from './predefined-variables.js';
import { CANCELABLE_STATUSES, COMPLETED_STATUSES } from './statuses.js';
import { announceJobErased, jobFieldsOf } from './job-changes.js';
import './job-traces.js';

export interface JobListParams extends PageParams {
  scope?: CiStatus[] | CiStatus;
  include_retried?: boolean;
}

/** Jobs with what their representations read: pipelines, users, commits, downstream pipelines. */
export interface JobRecords {
  pipelines: Map<number, Pipeline>;
  users: Map<number, User>;
  commits: Map<string, JobContext['commit']>;
  downstream: Map<number, { pipeline: Pipeline; fullPath: string }>;
  base: PipelineContext;
  /** Other families' attributes of each build (`jobFields`), by job id. */
  extra: Map<number, Record<string, unknown>>;
}

export interface StatusUpdate {
  exitCode?: number;
  failureReason?: string;
  coverage?: number;
}

const RETRYABLE: readonly CiStatus[] = ['success', 'failed', 'canceled'];

/**
 * The jobs of a project's pipelines: reading them, and every change of their status (by a runner, by
 * the API's cancel, retry, play and erase), each followed by the processing of their pipeline in the
 * same transaction.
 */
export class JobsService {
  private readonly jobRows: EntityRows<Job>;
  private readonly pipelineRows: EntityRows<Pipeline>;
  private readonly userRows: EntityRows<User>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: Events,
    private readonly processing: PipelineProcessing,
    private readonly repositories: RepositoriesService,
    private readonly secrets: SecretBox,
    private readonly config: { readonly externalUrl: string },
    private readonly listCounts: PipelineListCounts,
    private readonly contributions: Contributions,
  ) {
    this.jobRows = entityRows(dataSource, Job, 'j');
    this.pipelineRows = entityRows(dataSource, Pipeline, 'p');
    this.userRows = entityRows(dataSource, User, 'u');
  }

  async list(
    view: ProjectView,
    type: JobType,
    params: JobListParams,
    request: RequestInfo,
    pipelineId?: number,
  ): Promise<Page<Job>> {
    const query = this.dataSource
      .getRepository(Job)
      .createQueryBuilder('j')
      .where('j.project_id = :projectId AND j.type = :type', { projectId: view.project.id, type });
    if (pipelineId !== undefined) {
      if (!(await this.dataSource.manager.existsBy(Pipeline, { id: pipelineId, projectId: view.project.id })))
        throw recordNotFound();
      query.andWhere('j.pipeline_id = :pipelineId', { pipelineId });
    }
    // A pipeline's list leaves retried jobs out unless asked; the project's list has every attempt, as GitLab's.
    if (pipelineId !== undefined && !params.include_retried) query.andWhere('j.retried = false');
    const scope = params.scope === undefined ? [] : ([] as CiStatus[]).concat(params.scope);
    if (scope.length > 0) query.andWhere('j.status IN (:...scope)', { scope });
    query.orderBy('j.id', pipelineId === undefined ? 'DESC' : 'ASC');
    const counts = this.listCounts.counts(`jobs:${type}:${pipelineId ?? ''}`, view.project.id, params);
    return paginateOffsetInOneStatement(this.dataSource, query, this.jobRows, params, request, counts);
  }

  /** One build of the project (bridges are not jobs here, as in GitLab's jobs API). */
  async find(
    view: ProjectView,
    jobId: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Job> {
    const job = await manager.findOneBy(Job, { id: jobId, projectId: view.project.id, type: 'build' });
    if (!job) throw recordNotFound();
    return job;
  }

  async records(view: ProjectView, jobs: Job[]): Promise<JobRecords> {
    const manager = this.dataSource.manager;
    const pipelineIds = [...new Set(jobs.map((job) => job.pipelineId))];
    const userIds = [...new Set(jobs.map((job) => job.userId).filter((id): id is number => id !== null))];
    const bridgeIds = jobs.filter((job) => job.type === 'bridge').map((job) => job.id);
    // The page's pipelines and users in one prepared statement: this runs on every jobs list.
    const [related, downstream] = await Promise.all([
      preparedQuery<{
        pipelines: Array<Record<string, unknown>> | null;
        users: Array<Record<string, unknown>> | null;
      }>(
        this.dataSource,
        `SELECT (SELECT json_agg(p) FROM ci_pipelines p WHERE p.id = ANY($1)) AS pipelines,
           (SELECT json_agg(u) FROM users u WHERE u.id = ANY($2)) AS users`,
        [pipelineIds, userIds],
      ),
      bridgeIds.length
        ? (manager.query(
            `SELECT p.id, p.upstream_job_id, n.full_path || '/' || pr.path AS full_path
             FROM ci_pipelines p JOIN projects pr ON pr.id = p.project_id JOIN namespaces n ON n.id = pr.namespace_id
             WHERE p.upstream_job_id = ANY($1)`,
            [bridgeIds],
          ) as Promise<Array<{ id: number; upstream_job_id: number; full_path: string }>>)
        : [],
    ]);
    const pipelines = (related[0]?.pipelines ?? []).map((json) => this.pipelineRows.fromJson(json));
    const users = (related[0]?.users ?? []).map((json) => this.userRows.fromJson(json));
    const downstreamPipelines = downstream.length
      ? await manager.findBy(Pipeline, { id: In(downstream.map((row) => row.id)) })
      : [];
    const git = this.repositories.open(view).git;
    const [commits, extra] = await Promise.all([
      git.commits([...new Set(jobs.map((job) => job.sha))]).catch(() => new Map()),
      jobFieldsOf(
        this.contributions,
        jobs.filter((job) => job.type === 'build'),
      ),
    ]);
    return {
      pipelines: new Map(pipelines.map((p) => [p.id, p])),
      users: new Map(users.map((u) => [u.id, u])),
      commits,
      downstream: new Map(
        downstream.map((row) => [
          row.upstream_job_id,
          { pipeline: downstreamPipelines.find((p) => p.id === row.id)!, fullPath: row.full_path },
        ]),
      ),
      base: { fullPath: projectFullPath(view.project), externalUrl: this.config.externalUrl },
      extra,
    };
  }

  // ---- status changes ----

  /**
   * A job's status as its runner reports it: `pending` → `running` → `success`, `failed` or `canceled`.
   * The pipeline moves on in the same transaction. Throws 400 for a transition GitLab would refuse.
   */
  async updateStatus(
    jobId: number,
    status: CiStatus,
    update: StatusUpdate = {},
    within?: EntityManager,
  ): Promise<Job> {
    const inTransaction = <T>(work: (manager: EntityManager) => Promise<T>) =>
      within ? work(within) : this.dataSource.transaction(work);
    return inTransaction(async (manager) => {
      const job = await this.lock(manager, jobId);
      const now = new Date();
      const from = job.status;
      const allowed =
        (status === 'running' && (from === 'pending' || from === 'preparing')) ||
        (['success', 'failed', 'canceled'].includes(status) &&
          ['pending', 'preparing', 'running'].includes(from));
      if (!allowed) throw badParameter(`Cannot transition status from ${from} to ${status}`);
      job.status = status;
      if (status === 'running') job.startedAt = now;
      else this.finish(job, now);
      if (status === 'failed') {
        job.failureReason = update.failureReason ?? 'script_failure';
        const codes = job.options.allow_failure_exit_codes;
        if (update.exitCode !== undefined && Array.isArray(codes) && codes.includes(update.exitCode))
          job.allowFailure = true;
      }
      if (update.exitCode !== undefined) job.exitCode = update.exitCode;
      if (update.coverage !== undefined) job.coverage = update.coverage.toFixed(2);
      await manager.save(job);
      await this.processing.announce(manager, [job]);
      await this.afterChange(manager, job);
      return job;
    });
  }

  /** Text a runner sends for the job's log, appended. */
  async appendTrace(jobId: number, text: string): Promise<void> {
    await this.dataSource.query(`UPDATE ci_builds SET trace = coalesce(trace, '') || $2 WHERE id = $1`, [
      jobId,
      text,
    ]);
  }

  /** The job's log: a trace store's (the runner's live log, or its archive), else the row's. */
  async trace(view: ProjectView, jobId: number): Promise<string> {
    const job = await this.find(view, jobId);
    for (const store of this.contributions.of('ciJobTraces')) {
      const stored = await store.read(job);
      if (stored !== null) return (job.trace ?? '') + stored.toString('utf8');
    }
    return job.trace ?? '';
  }

  async cancel(view: ProjectView, jobId: number): Promise<Job> {
    return this.dataSource.transaction(async (manager) => {
      const job = await this.find(view, jobId, manager);
      if (!CANCELABLE_STATUSES.includes(job.status)) return job;
      await this.cancelJobs(manager, [job]);
      return job;
    });
  }

  /** Cancels jobs (GitLab's `cancel`): each pipeline touched moves on. */
  async cancelJobs(manager: EntityManager, jobs: Job[]): Promise<void> {
    const now = new Date();
    const pipelines = new Set<number>();
    for (const job of jobs) {
      if (!CANCELABLE_STATUSES.includes(job.status)) continue;
      job.status = 'canceled';
      this.finish(job, now);
      await manager.save(job);
      await this.processing.announce(manager, [job]);
      pipelines.add(job.pipelineId);
      await this.releaseResource(manager, job);
    }
    for (const pipelineId of pipelines) await this.processing.process(pipelineId, manager);
  }

  /** A new attempt of a finished job; the old one is kept as retried. Answers the new job. */
  async retry(view: ProjectView, jobId: number, user: User | null): Promise<Job> {
    return this.dataSource.transaction(async (manager) => {
      const job = await this.find(view, jobId, manager);
      if (job.retried || !RETRYABLE.includes(job.status)) throw forbidden('Job is not retryable');
      const clone = await this.retryJobs(manager, [job], user);
      await this.processing.process(job.pipelineId, manager);
      return manager.findOneByOrFail(Job, { id: clone[0].id });
    });
  }

  /** Clones jobs as new attempts and resets the skipped jobs after them (GitLab's RetryJobService). */
  async retryJobs(manager: EntityManager, jobs: Job[], user: User | null): Promise<Job[]> {
    const now = new Date();
    const clones: Job[] = [];
    for (const job of jobs) {
      await manager.update(Job, job.id, { retried: true });
      const clone = manager.create(Job, {
        ...job,
        id: undefined,
        status: 'created',
        failureReason: null,
        exitCode: null,
        trace: null,
        erasedAt: null,
        erasedById: null,
        scheduledAt: null,
        queuedAt: null,
        startedAt: null,
        finishedAt: null,
        duration: null,
        coverage: null,
        retried: false,
        userId: user?.id ?? job.userId,
        runnerId: null,
        createdAt: now,
        updatedAt: now,
      });
      clones.push(await manager.save(clone));
    }
    await this.resetSkipped(manager, jobs);
    return clones;
  }

  /** Skipped jobs after `jobs` (later stages, or needing them) go back to `created` to be processed again. */
  private async resetSkipped(manager: EntityManager, jobs: Job[]): Promise<void> {
    for (const pipelineId of new Set(jobs.map((job) => job.pipelineId))) {
      const mine = jobs.filter((job) => job.pipelineId === pipelineId);
      const minStage = Math.min(...mine.map((job) => job.stageIdx));
      const skipped = await manager.findBy(Job, { pipelineId, retried: false, status: 'skipped' });
      const reset = skipped.filter((other) =>
        other.needs !== null
          ? other.needs.some((need) => mine.some((job) => matchesNeed(job.name, need.name)))
          : other.stageIdx > minStage,
      );
      if (reset.length)
        await manager.update(
          Job,
          { id: In(reset.map((job) => job.id)) },
          { status: 'created', finishedAt: null },
        );
    }
  }

  /**
   * Plays a manual or delayed job now (with `job_variables_attributes`), or retries a finished one:
   * 400 "Unplayable Job" otherwise.
   */
  async play(
    view: ProjectView,
    jobId: number,
    user: User | null,
    variables: Array<{ key: string; value: string }> = [],
  ): Promise<Job> {
    return this.dataSource.transaction(async (manager) => {
      const job = await this.find(view, jobId, manager);
      const manual = job.when === 'manual' || job.when === 'delayed';
      if (!manual || job.retried) throw badParameter('Unplayable Job');
      let target = job;
      if (RETRYABLE.includes(job.status)) [target] = await this.retryJobs(manager, [job], user);
      else if (job.status !== 'manual' && job.status !== 'scheduled') throw badParameter('Unplayable Job');
      const now = new Date();
      target.status = target.resourceGroupId !== null ? 'waiting_for_resource' : 'pending';
      target.queuedAt = target.status === 'pending' ? now : null;
      target.userId = user?.id ?? target.userId;
      target.jobVariables = variables.length ? this.secrets.seal(JSON.stringify(variables)) : null;
      target.updatedAt = now;
      await manager.save(target);
      await this.processing.announce(manager, [target]);
      await this.resetSkipped(manager, [target]);
      if (target.type === 'bridge' && target.status === 'pending')
        await this.events.publish(manager, 'ci.bridge_trigger_requested', { jobId: target.id });
      await this.processing.process(target.pipelineId, manager);
      return manager.findOneByOrFail(Job, { id: target.id });
    });
  }

  /** The variables a manual job was played with. */
  playVariables(job: Job): Array<{ key: string; value: string }> {
    return job.jobVariables
      ? (JSON.parse(this.secrets.open(job.jobVariables)) as Array<{ key: string; value: string }>)
      : [];
  }

  /** Removes a finished job's log (and artifacts, when they exist): 403 unless there is something to erase. */
  async erase(view: ProjectView, jobId: number, user: User | null): Promise<Job> {
    return this.dataSource.transaction(async (manager) => {
      const job = await this.find(view, jobId, manager);
      const refused = () => new ApiError(403, { message: '403 Forbidden - Job is not erasable!' });
      if (!COMPLETED_STATUSES.includes(job.status) || job.erasedAt) throw refused();
      let stored = false;
      for (const store of this.contributions.of('ciJobTraces'))
        stored = (await store.erase(manager, job)) || stored;
      if (!job.trace && !stored) throw refused();
      job.trace = null;
      job.erasedAt = new Date();
      job.erasedById = user?.id ?? null;
      await manager.save(job);
      await announceJobErased(this.contributions, manager, job);
      return job;
    });
  }

  /** A job's row, locked for its update. */
  async lock(manager: EntityManager, jobId: number): Promise<Job> {
    const job = await manager
      .getRepository(Job)
      .createQueryBuilder('j')
      .setLock('pessimistic_write')
      .where('j.id = :jobId', { jobId })
      .getOne();
    if (!job) throw recordNotFound();
    return job;
  }

  private finish(job: Job, now: Date): void {
    job.finishedAt = now;
    job.duration = job.startedAt ? (now.getTime() - job.startedAt.getTime()) / 1000 : null;
    job.updatedAt = now;
  }

  /** After a job changed: its pipeline moves on, and a resource it held goes to the next waiting job. */
  async afterChange(manager: EntityManager, job: Job): Promise<void> {
    await this.releaseResource(manager, job);
    await this.processing.process(job.pipelineId, manager);
  }

  private async releaseResource(manager: EntityManager, job: Job): Promise<void> {
    if (job.resourceGroupId === null || !COMPLETED_STATUSES.includes(job.status)) return;
    for (const pipelineId of await this.processing.waitingOn(manager, job.resourceGroupId))
      if (pipelineId !== job.pipelineId)
        await this.events.publish(manager, 'ci.pipeline_process_requested', { pipelineId });
  }
}
