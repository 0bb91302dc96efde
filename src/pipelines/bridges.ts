/**
 * What runs off the request between pipelines: delayed jobs coming due, trigger jobs creating their
 * child or downstream pipelines and following them (`strategy: depend`), and auto-cancel of the older
 * pipelines of a ref.
 */
import { In, Not, type DataSource, type EntityManager } from 'typeorm';
import { canProject } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError } from '../core/errors.js';
import type { ServiceRegistry } from '../core/family.js';
import { User } from '../users/user.entity.js';
import type { CiSettings } from './adapters.js';
import type { JobsService } from './jobs.service.js';
import type { PipelineCreation } from './pipeline-creation.js';
import { Job, Pipeline, type CiStatus } from './pipeline.entity.js';
import type { PipelineProcessing } from './pipeline-processing.js';
import { CANCELABLE_STATUSES, COMPLETED_STATUSES } from './statuses.js';

interface TriggerOptions {
  include?: unknown[];
  project?: string;
  branch?: string;
  strategy?: 'depend';
  forward?: { yaml_variables?: boolean; pipeline_variables?: boolean };
}

const ALIVE: CiStatus[] = ['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'scheduled'];

export class PipelineLinks {
  constructor(
    private readonly dataSource: DataSource,
    private readonly deps: Pick<ServiceRegistry, 'projects'>,
    private readonly creation: PipelineCreation,
    private readonly processing: PipelineProcessing,
    private readonly jobs: JobsService,
    private readonly settings: CiSettings,
  ) {}

  /** A delayed job whose time has come is enqueued (unless it was played or canceled meanwhile). */
  async startDelayed(jobId: number): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const job = await manager.findOneBy(Job, { id: jobId });
      if (!job || job.status !== 'scheduled') return;
      const now = new Date();
      job.status = job.resourceGroupId !== null ? 'waiting_for_resource' : 'pending';
      job.queuedAt = job.status === 'pending' ? now : null;
      job.updatedAt = now;
      await this.processing.saveJobs(manager, [job], now);
      await this.processing.process(job.pipelineId, manager);
    });
  }

  /** Creates the pipeline a pending bridge triggers, or fails the bridge with GitLab's reason. */
  async trigger(jobId: number): Promise<void> {
    const bridge = await this.dataSource.manager.findOneBy(Job, { id: jobId, type: 'bridge' });
    if (!bridge || bridge.status !== 'pending') return;
    if (await this.dataSource.manager.existsBy(Pipeline, { upstreamJobId: bridge.id })) return;
    const failure = await this.createDownstream(bridge);
    await this.dataSource.transaction(async (manager) => {
      const job = await this.jobs.lock(manager, bridge.id);
      if (job.status !== 'pending') return;
      const now = new Date();
      const depend = (job.options.trigger as TriggerOptions | undefined)?.strategy === 'depend';
      job.startedAt = now;
      if (failure) {
        job.status = 'failed';
        job.failureReason = failure;
        job.finishedAt = now;
      } else if (depend) job.status = 'running';
      else {
        job.status = 'success';
        job.finishedAt = now;
      }
      job.duration = job.finishedAt ? 0 : null;
      job.updatedAt = now;
      await manager.save(job);
      await this.jobs.afterChange(manager, job);
    });
    const child = await this.dataSource.manager.findOneBy(Pipeline, { upstreamJobId: bridge.id });
    if (child) await this.mirror(child.id);
  }

  /** The failure reason when the downstream pipeline cannot be created, else null. */
  private async createDownstream(bridge: Job): Promise<string | null> {
    const manager = this.dataSource.manager;
    const upstream = await manager.findOneByOrFail(Pipeline, { id: bridge.pipelineId });
    const user = bridge.userId === null ? null : await manager.findOneBy(User, { id: bridge.userId });
    const caller: Caller = { user, token: null };
    const trigger = (bridge.options.trigger ?? {}) as TriggerOptions;
    const limits = await this.settings.limits();
    if (
      limits.pipeline_hierarchy_size > 0 &&
      (await this.hierarchySize(manager, upstream)) >= limits.pipeline_hierarchy_size
    )
      return 'reached_max_pipeline_hierarchy_size';
    const variables =
      trigger.forward?.yaml_variables === false
        ? []
        : Object.entries(bridge.yamlVariables).map(([key, value]) => ({
            key,
            value,
            variable_type: 'env_var' as const,
          }));
    let view;
    try {
      view = await this.deps.projects.find(caller, trigger.project ?? upstream.projectId);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return 'downstream_bridge_project_not_found';
      throw err;
    }
    if (!canProject(caller, 'create_pipeline', this.deps.projects.subject(view)))
      return 'insufficient_bridge_permissions';
    const child = !trigger.project;
    if (!child && view.project.id === upstream.projectId && !trigger.branch) return 'invalid_bridge_trigger';
    const ref = child ? upstream.ref : (trigger.branch ?? view.project.defaultBranch);
    if (!ref) return 'downstream_pipeline_creation_failed';
    const result = await this.creation.create({
      project: view,
      ref,
      sha: child ? upstream.sha : undefined,
      user,
      source: child ? 'parent_pipeline' : 'pipeline',
      variables,
      ...(child
        ? {
            parent: { pipelineId: upstream.id, jobId: bridge.id },
            configContent: JSON.stringify({ include: trigger.include ?? [] }),
          }
        : { upstream: { pipelineId: upstream.id, jobId: bridge.id } }),
    });
    return 'errors' in result ? 'downstream_pipeline_creation_failed' : null;
  }

  /** Pipelines in the tree the pipeline belongs to (from its root down). */
  private async hierarchySize(manager: EntityManager, pipeline: Pipeline): Promise<number> {
    const [{ count }] = (await manager.query(
      `WITH RECURSIVE up AS (
         SELECT id, upstream_pipeline_id FROM ci_pipelines WHERE id = $1
         UNION ALL SELECT p.id, p.upstream_pipeline_id FROM ci_pipelines p JOIN up ON p.id = up.upstream_pipeline_id
       ), root AS (SELECT id FROM up WHERE upstream_pipeline_id IS NULL LIMIT 1),
       down AS (
         SELECT id FROM root
         UNION ALL SELECT p.id FROM ci_pipelines p JOIN down ON p.upstream_pipeline_id = down.id
       ) SELECT count(*)::int AS count FROM down`,
      [pipeline.id],
    )) as Array<{ count: number }>;
    return count;
  }

  /** A bridge with `strategy: depend` takes its downstream pipeline's final status. */
  async mirror(pipelineId: number): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const downstream = await manager.findOneBy(Pipeline, { id: pipelineId });
      if (!downstream?.upstreamJobId) return;
      const bridge = await manager.findOneBy(Job, { id: downstream.upstreamJobId });
      if (!bridge || bridge.status !== 'running') return;
      if ((bridge.options.trigger as TriggerOptions | undefined)?.strategy !== 'depend') return;
      if (!COMPLETED_STATUSES.includes(downstream.status) && downstream.status !== 'manual') return;
      const locked = await this.jobs.lock(manager, bridge.id);
      const now = new Date();
      locked.status = downstream.status === 'manual' ? 'manual' : downstream.status;
      if (locked.status === 'failed') locked.failureReason = 'downstream_pipeline_failed';
      if (locked.status !== 'manual') locked.finishedAt = now;
      locked.duration =
        locked.startedAt && locked.finishedAt ? (now.getTime() - locked.startedAt.getTime()) / 1000 : null;
      locked.updatedAt = now;
      await manager.save(locked);
      await this.jobs.afterChange(manager, locked);
    });
  }

  /**
   * Auto-cancel (GitLab's CancelRedundantPipelinesService), as the new pipeline's
   * `workflow:auto_cancel:on_new_commit` says: `conservative` (default) cancels the older alive
   * pipelines of the same ref, with their children, unless one of their jobs that is not interruptible
   * has started; `interruptible` cancels their interruptible jobs only; `none` nothing.
   */
  async autoCancel(pipelineId: number): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const pipeline = await manager.findOneBy(Pipeline, { id: pipelineId });
      if (!pipeline) return;
      const older = await manager.find(Pipeline, {
        where: {
          projectId: pipeline.projectId,
          ref: pipeline.ref,
          tag: pipeline.tag,
          id: Not(pipeline.id),
          status: In(ALIVE),
          source: Not('parent_pipeline'),
        },
      });
      const mode = pipeline.autoCancelOnNewCommit ?? 'conservative';
      if (mode === 'none') return;
      for (const candidate of older.filter((p) => p.id < pipeline.id)) {
        const tree = await this.tree(manager, candidate.id);
        const jobs = await manager.findBy(Job, { pipelineId: In(tree), retried: false });
        const cancelable = jobs.filter((job) => CANCELABLE_STATUSES.includes(job.status));
        if (mode === 'interruptible') {
          // Only interruptible jobs go, whatever else has started.
          await this.jobs.cancelJobs(
            manager,
            cancelable.filter((job) => job.interruptible),
          );
          continue;
        }
        const started = jobs.filter((job) => job.startedAt !== null || job.status === 'running');
        if (started.some((job) => !job.interruptible)) continue;
        await this.jobs.cancelJobs(manager, cancelable);
        await manager.update(Pipeline, { id: In(tree) }, { autoCanceledById: pipeline.id });
      }
    });
  }

  /** A pipeline and its descendants (child and downstream pipelines). */
  async tree(manager: EntityManager, pipelineId: number): Promise<number[]> {
    const rows = (await manager.query(
      `WITH RECURSIVE down AS (
         SELECT id FROM ci_pipelines WHERE id = $1
         UNION ALL SELECT p.id FROM ci_pipelines p JOIN down ON p.upstream_pipeline_id = down.id
       ) SELECT id FROM down`,
      [pipelineId],
    )) as Array<{ id: number }>;
    return rows.map((row) => row.id);
  }
}
