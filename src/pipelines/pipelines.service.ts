import { Brackets, In, type DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import type { operations } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { ApiError, forbidden, recordNotFound } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { type Page, type RequestInfo } from '../core/pagination.js';
import { paginateOffsetInOneStatement } from '../db/paged-rows.js';
import { entityRows, type EntityRows } from '../db/rows.js';
import { PipelineListCounts } from './list-counts.js';
import type { ProjectView } from '../projects/projects.service.js';
import { SecretBox } from '../remote_mirrors/secret-box.js';
import { User } from '../users/user.entity.js';
import { CiSettings, type CiSettingsServices } from './adapters.js';
import {
  PipelineCreation,
  type CreatePipelineInput,
  type CreatePipelineResult,
} from './pipeline-creation.js';
import { Job, Pipeline, PipelineVariable } from './pipeline.entity.js';
import type { PipelineDetailContext } from './pipeline.presenter.js';
import { projectFullPath } from './predefined-variables.js';
import { PipelineProcessing } from './pipeline-processing.js';
import { PipelineLinks } from './bridges.js';
import { JobsService } from './jobs.service.js';
import { ZERO_SHA } from '../git/ref-changes.js';
import type { RefsUpdated } from '../repository/repositories.events.js';
import type { Logger } from '../logger.js';
import { CANCELABLE_STATUSES } from './statuses.js';
import type { CiStatus } from './pipeline.entity.js';

export type ListPipelinesParams = NonNullable<operations['listProjectPipelines']['parameters']['query']>;

const FINISHED = ['success', 'failed', 'canceled', 'skipped'];
const ORDER_COLUMNS = {
  id: 'p.id',
  status: 'p.status',
  ref: 'p.ref',
  updated_at: 'p.updated_at',
  user_id: 'p.user_id',
};

export type PipelinesDeps = Pick<ServiceRegistry, 'projects' | 'repositories' | 'protectedRefs'> &
  CiSettingsServices;

/**
 * A project's pipelines: creating them (for pushes, the API, triggers, schedules, merge requests and
 * parent pipelines), reading them, and the processing that moves their jobs along.
 */
export class PipelinesService {
  readonly dataSource: DataSource;
  readonly secrets: SecretBox;
  readonly processing: PipelineProcessing;
  readonly creation: PipelineCreation;
  private readonly config: CoreDeps['config'];
  private readonly events: CoreDeps['events'];
  readonly jobs: JobsService;
  readonly bridges: PipelineLinks;
  /** Variables and plan limits as the pipelines read them (adapters.ts). */
  readonly settings: CiSettings;
  private readonly logger: Logger;
  private readonly pipelineRows: EntityRows<Pipeline>;
  /** The totals of the pipeline and job lists, shared with the jobs. */
  private readonly listCounts: PipelineListCounts;

  constructor(
    core: CoreDeps,
    readonly deps: PipelinesDeps,
  ) {
    this.dataSource = core.dataSource;
    this.pipelineRows = entityRows(core.dataSource, Pipeline, 'p');
    this.listCounts = new PipelineListCounts(core.dataSource);
    this.events = core.events;
    this.config = core.config;
    this.secrets = SecretBox.fromConfig(core.config);
    this.processing = new PipelineProcessing(core.dataSource, core.events, core.contributions);
    this.settings = new CiSettings(deps);
    this.creation = new PipelineCreation(
      core.dataSource,
      core.events,
      deps,
      this.settings,
      this.secrets,
      core.config,
      this.processing,
    );
    this.jobs = new JobsService(
      core.dataSource,
      core.events,
      this.processing,
      deps.repositories,
      this.secrets,
      core.config,
      this.listCounts,
      core.contributions,
    );
    this.bridges = new PipelineLinks(
      core.dataSource,
      deps,
      this.creation,
      this.processing,
      this.jobs,
      this.settings,
    );
    this.logger = core.logger;
  }

  /**
   * Creates a pipeline in one transaction (the caller's, when `manager` is given). Configuration errors
   * are `{ errors }` for sources someone answers to (API: 400 `{"message": {"base": errors}}`), and a
   * failed pipeline with `yaml_errors` for pushes, schedules and downstream pipelines.
   */
  create(input: CreatePipelineInput): Promise<CreatePipelineResult> {
    return this.creation.create(input);
  }

  /** `POST /projects/:id/pipeline`: source `api`; refusals answer 400 `{"message": {"base": [...]}}`. */
  async createThroughApi(
    view: ProjectView,
    caller: Caller,
    body: {
      ref: string;
      variables?: Array<{ key: string; value: string; variable_type?: 'env_var' | 'file' }>;
      inputs?: Record<string, unknown>;
    },
  ): Promise<Pipeline> {
    const base = (messages: string[]) => new ApiError(400, { message: { base: messages } });
    const git = this.deps.repositories.open(view).git;
    const branch = await git.resolveCommit(`refs/heads/${body.ref}`);
    const tag = branch ? null : await git.resolveCommit(`refs/tags/${body.ref}`);
    if (!branch && !tag) throw base(['Reference not found']);
    if (branch && !(await this.mayRunOnBranch(caller, view, body.ref)))
      throw base([
        `You do not have sufficient permission to run a pipeline on '${body.ref}'. Please select a different branch or contact your administrator for assistance.`,
      ]);
    const result = await this.create({
      project: view,
      ref: body.ref,
      user: caller.user,
      source: 'api',
      variables: body.variables,
      inputs: body.inputs,
    });
    if ('errors' in result) throw base(result.errors);
    return result.pipeline;
  }

  /** A protected branch runs pipelines only for who may push or merge to it (GitLab's `can_update_branch?`). */
  async mayRunOnBranch(caller: Caller, view: ProjectView, branch: string): Promise<boolean> {
    const refs = this.deps.protectedRefs;
    if (!(await refs.isProtectedBranch(view.project.id, branch))) return true;
    const actor = await refs.actor(caller, view.accessLevel);
    return (
      (await refs.mayPush(view.project.id, actor, branch)) ||
      (await refs.mayMerge(view.project.id, actor, branch))
    );
  }

  /** After a push: one pipeline per branch or tag created or moved (not deleted), the pusher as its user. */
  async createForPush(payload: RefsUpdated): Promise<void> {
    if (payload.userId === null) return;
    const user = await this.dataSource.manager.findOneBy(User, { id: payload.userId });
    if (!user) return;
    let view: ProjectView;
    try {
      view = await this.deps.projects.find({ user, token: null }, payload.projectId);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return;
      throw err;
    }
    const git = this.deps.repositories.open(view).git;
    for (const change of payload.changes) {
      if (change.after === ZERO_SHA) continue;
      const match = /^refs\/(heads|tags)\/(.+)$/.exec(change.ref);
      if (!match) continue;
      // Retried after a crash: a pipeline for this very update exists already.
      if (
        await this.dataSource.manager.existsBy(Pipeline, {
          projectId: view.project.id,
          ref: match[2],
          sha: change.after,
          source: 'push',
          beforeSha: change.before,
        })
      )
        continue;
      const changedPaths =
        change.before === ZERO_SHA
          ? null
          : await git
              .diffs(change.before, change.after)
              .then((result) =>
                result.overflow ? null : result.diffs.flatMap((d) => [d.oldPath, d.newPath]),
              )
              .catch(() => null);
      const result = await this.create({
        project: view,
        ref: match[2],
        sha: change.after,
        beforeSha: change.before,
        user,
        source: 'push',
        changedPaths: changedPaths ? [...new Set(changedPaths)] : null,
        pushOptions: payload.pushOptions,
      });
      if ('errors' in result)
        this.logger.debug(
          { projectId: view.project.id, ref: change.ref, errors: result.errors },
          'no pipeline for push',
        );
    }
  }

  async list(view: ProjectView, params: ListPipelinesParams, request: RequestInfo): Promise<Page<Pipeline>> {
    const query = this.dataSource
      .getRepository(Pipeline)
      .createQueryBuilder('p')
      .where('p.project_id = :projectId', { projectId: view.project.id });
    this.filter(query, view.project.id, params);
    const order = ORDER_COLUMNS[params.order_by ?? 'id'];
    const direction = params.sort === 'asc' ? 'ASC' : 'DESC';
    query.orderBy(order, direction);
    if (order !== 'p.id') query.addOrderBy('p.id', direction);
    const counts = this.listCounts.counts('pipelines', view.project.id, params);
    return paginateOffsetInOneStatement(this.dataSource, query, this.pipelineRows, params, request, counts);
  }

  private filter(query: SelectQueryBuilder<Pipeline>, projectId: number, params: ListPipelinesParams): void {
    if (params.source) query.andWhere('p.source = :source', { source: params.source });
    else query.andWhere("p.source <> 'parent_pipeline'");
    const scope = params.scope;
    if (scope === 'running' || scope === 'pending') query.andWhere('p.status = :scope', { scope });
    if (scope === 'finished') query.andWhere('p.status IN (:...finished)', { finished: FINISHED });
    if (scope === 'branches' || scope === 'tags')
      query.andWhere(
        `p.id IN (SELECT max(l.id) FROM ci_pipelines l WHERE l.project_id = :projectId AND l.tag = :tagScope
           AND l.source <> 'parent_pipeline' GROUP BY l.ref)`,
        { projectId, tagScope: scope === 'tags' },
      );
    if (params.status) query.andWhere('p.status = :status', { status: params.status });
    if (params.ref !== undefined) query.andWhere('p.ref = :ref', { ref: params.ref });
    if (params.sha !== undefined) query.andWhere('p.sha = :sha', { sha: params.sha });
    if (params.name !== undefined) query.andWhere('p.name = :name', { name: params.name });
    if (params.yaml_errors !== undefined)
      query.andWhere(params.yaml_errors ? 'p.yaml_errors IS NOT NULL' : 'p.yaml_errors IS NULL');
    if (params.username !== undefined)
      query.andWhere('p.user_id IN (SELECT u.id FROM users u WHERE lower(u.username) = lower(:username))', {
        username: params.username,
      });
    const dates = [
      ['updated_after', 'p.updated_at >'],
      ['updated_before', 'p.updated_at <'],
      ['created_after', 'p.created_at >'],
      ['created_before', 'p.created_at <'],
    ] as const;
    for (const [key, sql] of dates)
      if (params[key])
        query.andWhere(new Brackets((q) => q.where(`${sql} :${key}`, { [key]: new Date(params[key]!) })));
  }

  /** One pipeline of the project (children included): 404 Not found otherwise. */
  async find(
    view: ProjectView,
    pipelineId: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Pipeline> {
    const pipeline = await manager.findOneBy(Pipeline, { id: pipelineId, projectId: view.project.id });
    if (!pipeline) throw recordNotFound();
    return pipeline;
  }

  /** The newest pipeline of the ref's head commit (default branch by default): 403 when there is none. */
  async latest(view: ProjectView, ref: string | undefined): Promise<Pipeline> {
    const name = ref ?? view.project.defaultBranch;
    const git = this.deps.repositories.open(view).git;
    const sha = name
      ? ((await git.resolveCommit(`refs/heads/${name}`)) ?? (await git.resolveCommit(`refs/tags/${name}`)))
      : null;
    const pipeline = sha
      ? await this.dataSource
          .getRepository(Pipeline)
          .createQueryBuilder('p')
          .where('p.project_id = :projectId AND p.ref = :ref AND p.sha = :sha', {
            projectId: view.project.id,
            ref: name,
            sha,
          })
          .andWhere("p.source <> 'parent_pipeline'")
          .orderBy('p.id', 'DESC')
          .getOne()
      : null;
    if (!pipeline) throw forbidden();
    return pipeline;
  }

  async variables(view: ProjectView, pipelineId: number) {
    const pipeline = await this.find(view, pipelineId);
    // A schedule's pipeline holds only the schedule's variables, which GitLab does not list here.
    if (pipeline.source === 'schedule') return [];
    const rows = await this.dataSource.getRepository(PipelineVariable).find({
      where: { pipelineId: pipeline.id },
      order: { id: 'ASC' },
    });
    return rows.map((row) => ({
      key: row.key,
      value: this.secrets.open(row.encryptedValue),
      variable_type: row.variableType,
      raw: row.raw,
    }));
  }

  /** What `presentPipeline` needs: the pipeline's user and whether allowed failures left warnings. */
  async detailContext(view: ProjectView, pipeline: Pipeline): Promise<PipelineDetailContext> {
    const [user, warning] = await Promise.all([
      pipeline.userId === null ? null : this.dataSource.manager.findOneBy(User, { id: pipeline.userId }),
      this.dataSource.manager.exists(Job, {
        where: {
          pipelineId: pipeline.id,
          retried: false,
          allowFailure: true,
          status: In(['failed', 'canceled']),
        },
      }),
    ]);
    return { ...this.context(view), user, warnings: warning };
  }

  /** Plays a manual job; on a protected branch only for who may push or merge to it (rule `protected_ref`). */
  async playJob(
    view: ProjectView,
    caller: Caller,
    jobId: number,
    variables: Array<{ key: string; value: string }>,
  ) {
    const job = await this.jobs.find(view, jobId);
    if (!job.tag && !(await this.mayRunOnBranch(caller, view, job.ref))) throw forbidden();
    return this.jobs.play(view, jobId, caller.user, variables);
  }

  /** Cancels every cancelable job of the pipeline and of the pipelines it started. */
  async cancel(view: ProjectView, pipelineId: number): Promise<Pipeline> {
    return this.dataSource.transaction(async (manager) => {
      const pipeline = await this.find(view, pipelineId, manager);
      const tree = await this.bridges.tree(manager, pipeline.id);
      const jobs = await manager.findBy(Job, {
        pipelineId: In(tree),
        retried: false,
        status: In([...CANCELABLE_STATUSES]),
      });
      await this.jobs.cancelJobs(manager, jobs);
      return this.find(view, pipelineId, manager);
    });
  }

  /** Retries the pipeline's failed and canceled jobs (GitLab's RetryPipelineService). */
  async retry(view: ProjectView, pipelineId: number, user: User | null): Promise<Pipeline> {
    return this.dataSource.transaction(async (manager) => {
      const pipeline = await this.find(view, pipelineId, manager);
      const retryable: CiStatus[] = ['failed', 'canceled'];
      const jobs = await manager.findBy(Job, {
        pipelineId: pipeline.id,
        retried: false,
        status: In(retryable),
      });
      if (jobs.length === 0) throw forbidden();
      await this.jobs.retryJobs(manager, jobs, user);
      await this.processing.process(pipeline.id, manager);
      return this.find(view, pipelineId, manager);
    });
  }

  /** Deletes a pipeline with its stages, jobs and variables (child pipelines stay, unlinked). */
  async remove(view: ProjectView, pipelineId: number): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const pipeline = await this.find(view, pipelineId, manager);
      // Resource groups its jobs held go to the jobs waiting in other pipelines.
      const held = (await manager.query(
        `SELECT DISTINCT resource_group_id AS id FROM ci_builds
         WHERE pipeline_id = $1 AND resource_group_id IS NOT NULL AND status IN ('preparing', 'pending', 'running')`,
        [pipeline.id],
      )) as Array<{ id: number }>;
      await manager.delete(Pipeline, { id: pipeline.id });
      for (const { id } of held)
        for (const waiting of await this.processing.waitingOn(manager, id))
          await this.events.publish(manager, 'ci.pipeline_process_requested', { pipelineId: waiting });
    });
  }

  /** Read when used: the configured external URL may be set after the services are built. */
  get externalUrl(): string {
    return this.config.externalUrl;
  }

  context(view: ProjectView) {
    return { fullPath: projectFullPath(view.project), externalUrl: this.externalUrl };
  }
}
