/**
 * Commit statuses: what external systems post on commits, kept as GitLab keeps them, generic jobs
 * (`ci_builds` of type `generic`, stage `external`) of an external pipeline of the commit and ref; and the
 * list of a commit's job statuses. A posted status moves its pipeline's status through the pipelines
 * family, so it counts wherever pipelines do (merge checks, automatic merges, commit status).
 */
import { In, type EntityManager } from 'typeorm';
import type { components, operations } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { ApiError, forbidden, notFound, validationFailed } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { paginateOffset, type Page, type RequestInfo } from '../core/pagination.js';
import { nextInternalId } from '../db/internal-ids.js';
import type { GitCommit } from '../git/commits.js';
import { ZERO_SHA } from '../git/ref-changes.js';
import { Job, Pipeline, PipelineStage } from '../pipelines/pipeline.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { User } from '../users/user.entity.js';
import type { CommitFieldsContribution } from '../commits/extension-points.js';
import { commitPipelineFields } from './commit-fields.js';
import { FINISHED, transition, type PostedState } from './transitions.js';

export type CommitStatusCreate = components['schemas']['CommitStatusCreate'];
export type ListCommitStatusesParams = NonNullable<operations['listCommitStatuses']['parameters']['query']>;

/** GitLab's stage of posted statuses, after every stage of the configuration. */
export const EXTERNAL_STAGE = 'external';
export const EXTERNAL_STAGE_IDX = 1_000_000;

const MAX_TARGET_URL = 255;

/** What a generic job keeps beside the job's columns, in its `options` (it has no runner keywords). */
export interface StatusOptions {
  target_url?: string | null;
  description?: string | null;
}

/** GitLab's `addressable_url` validation of `target_url`, with its messages. */
function targetUrlErrors(url: string): string[] {
  if (url.length > MAX_TARGET_URL) return [`is too long (maximum is ${MAX_TARGET_URL} characters)`];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return ['is blocked: URI is invalid'];
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return ['is blocked: Only allowed schemes are http, https'];
  return [];
}

export class CommitStatusesService {
  /** `status` and `last_pipeline` of single commits (`commitFields`). */
  readonly commitFields: CommitFieldsContribution;

  constructor(
    private readonly core: CoreDeps,
    private readonly services: Pick<
      ServiceRegistry,
      'repositories' | 'protectedRefs' | 'pipelines' | 'projects'
    >,
  ) {
    this.commitFields = commitPipelineFields(core.dataSource, services.projects);
  }

  /** The commit a path's `sha` names (a SHA or a branch or tag name): 404 `Commit` when none. */
  private async commitOf(view: ProjectView, sha: string) {
    const repo = this.services.repositories.open(view);
    const commit = await repo.git.commit(sha);
    if (!commit) throw notFound('Commit');
    return { repo, commit };
  }

  /** `POST /projects/:id/statuses/:sha`. */
  async create(
    caller: Caller,
    view: ProjectView,
    shaParam: string,
    params: CommitStatusCreate,
  ): Promise<Job> {
    const { repo, commit } = await this.commitOf(view, shaParam);
    const sha = commit.id;
    const name = params.name ?? params.context ?? 'default';
    if (params.target_url !== undefined) {
      const errors = targetUrlErrors(params.target_url);
      if (errors.length > 0) throw validationFailed({ target_url: errors });
    }
    const projectId = view.project.id;
    const job = await this.core.dataSource.transaction(async (tx) => {
      // One post at a time per commit, as GitLab's lease: two first statuses make one pipeline.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`commit_statuses:${projectId}:${sha}`]);
      const matching = await this.matchingPipeline(tx, projectId, sha, params);
      if (params.pipeline_id !== undefined && !matching)
        throw notFound('Pipeline for pipeline_id, sha and ref');
      const ref = params.ref ?? matching?.ref ?? (await repo.git.branchNamesContaining(sha))[0] ?? null;
      if (ref === null) throw notFound('References for commit');
      await this.assertMayUpdate(caller, view, ref);
      const tag = matching
        ? matching.tag
        : (await repo.git.branch(ref)) === null &&
          (await repo.git.resolveCommit(`refs/tags/${ref}`)) !== null;
      const pipeline =
        matching ?? (await this.createExternalPipeline(tx, { projectId, sha, ref, tag, caller, commit }));
      const saved = await this.applyState(tx, pipeline, caller, { name, ref, state: params.state }, params);
      await this.refreshPipeline(tx, pipeline);
      return saved;
    });
    return job;
  }

  /** GitLab's external pipeline of a commit and ref, made for its first posted status. */
  private async createExternalPipeline(
    tx: EntityManager,
    input: { projectId: number; sha: string; ref: string; tag: boolean; caller: Caller; commit: GitCommit },
  ): Promise<Pipeline> {
    const now = new Date();
    return tx.save(
      tx.create(Pipeline, {
        projectId: input.projectId,
        iid: await nextInternalId(tx, input.projectId, 'ci_pipelines'),
        ref: input.ref,
        sha: input.sha,
        beforeSha: ZERO_SHA,
        tag: input.tag,
        source: 'external',
        status: 'created',
        failureReason: null,
        name: null,
        yamlErrors: null,
        userId: input.caller.user?.id ?? null,
        mergeRequestId: null,
        parentPipelineId: null,
        upstreamPipelineId: null,
        upstreamJobId: null,
        triggerId: null,
        scheduleId: null,
        autoCanceledById: null,
        startedAt: null,
        finishedAt: null,
        committedAt: input.commit.committedDate,
        duration: null,
        queuedDuration: null,
        coverage: null,
        createdAt: now,
        updatedAt: now,
      }),
    );
  }

  /** The pipeline's stages and status from its jobs, by the pipelines family's processing (which publishes a change). */
  private async refreshPipeline(tx: EntityManager, pipeline: Pipeline): Promise<void> {
    await this.services.pipelines.processing.process(pipeline.id, tx);
  }

  /**
   * The newest pipeline of the commit (for `ref` when given, and the one `pipeline_id` names when given),
   * among its newest 100 unless a pipeline is named, as GitLab looks.
   */
  private async matchingPipeline(
    tx: EntityManager,
    projectId: number,
    sha: string,
    params: CommitStatusCreate,
  ): Promise<Pipeline | null> {
    const query = tx
      .getRepository(Pipeline)
      .createQueryBuilder('p')
      .where('p.project_id = :projectId AND p.sha = :sha', { projectId, sha })
      .orderBy('p.id', 'DESC');
    if (params.ref !== undefined) query.andWhere('p.ref = :ref', { ref: params.ref });
    if (params.pipeline_id !== undefined) query.andWhere('p.id = :id', { id: params.pipeline_id });
    return query.getOne();
  }

  /**
   * GitLab's `update_pipeline` on a pipeline of a protected branch: the caller must be able to push or
   * merge to it (rule `push_to_status_ref`).
   */
  private async assertMayUpdate(caller: Caller, view: ProjectView, ref: string): Promise<void> {
    const rules = this.services.protectedRefs;
    if (!(await rules.isProtectedBranch(view.project.id, ref))) return;
    const actor = await rules.actor(caller, view.accessLevel);
    const may =
      (await rules.mayPush(view.project.id, actor, ref)) ||
      (await rules.mayMerge(view.project.id, actor, ref));
    if (!may) throw forbidden();
  }

  /**
   * Updates the caller's pending or running status of that name and ref in the pipeline, or adds a new one
   * (the older ones of that name become retried); then fires the posted state's events.
   */
  private async applyState(
    tx: EntityManager,
    pipeline: Pipeline,
    caller: Caller,
    key: { name: string; ref: string; state: PostedState },
    params: CommitStatusCreate,
  ): Promise<Job> {
    const jobs = tx.getRepository(Job);
    const userId = caller.user?.id ?? null;
    const existing = await jobs
      .createQueryBuilder('j')
      .where("j.pipeline_id = :pipelineId AND j.type = 'generic' AND j.name = :name AND j.ref = :ref", {
        pipelineId: pipeline.id,
        name: key.name,
        ref: key.ref,
      })
      .andWhere("j.status IN ('pending', 'running') AND j.retried = false")
      .andWhere(userId === null ? 'j.user_id IS NULL' : 'j.user_id = :userId', { userId })
      .orderBy('j.id', 'DESC')
      .getOne();
    const from = existing?.status ?? 'created';
    const result = transition(from, key.state);
    if (!result.ok) throw new ApiError(400, { message: result.message });
    const now = new Date();
    const stage = await this.externalStage(tx, pipeline);
    const job = existing ?? this.newStatus(tx, pipeline, stage, key, userId, now);
    const options: StatusOptions = { ...(job.options as StatusOptions) };
    if (params.target_url !== undefined) options.target_url = params.target_url;
    if (params.description !== undefined) options.description = params.description;
    job.options = options as Record<string, unknown>;
    if (params.coverage !== undefined) job.coverage = params.coverage.toFixed(2);
    this.moveTo(job, result.status, now);
    const saved = await jobs.save(job);
    if (!existing)
      await tx.query(
        `UPDATE ci_builds SET retried = true, updated_at = now()
         WHERE pipeline_id = $1 AND name = $2 AND id < $3 AND retried = false`,
        [pipeline.id, key.name, saved.id],
      );
    return saved;
  }

  private newStatus(
    tx: EntityManager,
    pipeline: Pipeline,
    stage: PipelineStage,
    key: { name: string; ref: string },
    userId: number | null,
    now: Date,
  ): Job {
    return tx.getRepository(Job).create({
      type: 'generic',
      projectId: pipeline.projectId,
      pipelineId: pipeline.id,
      stageId: stage.id,
      name: key.name,
      stage: EXTERNAL_STAGE,
      stageIdx: EXTERNAL_STAGE_IDX,
      status: 'created',
      failureReason: null,
      when: 'on_success',
      startIn: null,
      allowFailure: false,
      options: {},
      yamlVariables: {},
      needs: null,
      jobVariables: null,
      resourceGroupId: null,
      interruptible: false,
      retried: false,
      userId,
      ref: key.ref,
      tag: pipeline.tag,
      sha: pipeline.sha,
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
      createdAt: now,
      updatedAt: now,
    });
  }

  /** The status and its times, as GitLab's transitions stamp them. */
  private moveTo(job: Job, status: Job['status'], now: Date): void {
    if (status === 'pending' && job.queuedAt === null) job.queuedAt = now;
    if (status === 'running' && job.startedAt === null) job.startedAt = now;
    if (FINISHED.includes(status)) {
      job.finishedAt = now;
      if (status === 'failed') job.failureReason = 'api_failure';
      if (job.startedAt) job.duration = (now.getTime() - job.startedAt.getTime()) / 1000;
    }
    job.status = status;
    job.updatedAt = now;
  }

  /** The pipeline's `external` stage, made when it has none. */
  private async externalStage(tx: EntityManager, pipeline: Pipeline): Promise<PipelineStage> {
    const stages = tx.getRepository(PipelineStage);
    await tx.query(
      `INSERT INTO ci_stages (project_id, pipeline_id, name, position, status) VALUES ($1, $2, $3, $4, 'created')
       ON CONFLICT (pipeline_id, name) DO NOTHING`,
      [pipeline.projectId, pipeline.id, EXTERNAL_STAGE, EXTERNAL_STAGE_IDX],
    );
    return stages.findOneByOrFail({ pipelineId: pipeline.id, name: EXTERNAL_STAGE });
  }

  /** `GET /projects/:id/repository/commits/:sha/statuses`: every job of the commit's pipelines. */
  async list(
    view: ProjectView,
    shaParam: string,
    params: ListCommitStatusesParams,
    request: RequestInfo,
  ): Promise<Page<Job>> {
    const { commit } = await this.commitOf(view, shaParam);
    const query = this.core.dataSource
      .getRepository(Job)
      .createQueryBuilder('j')
      .innerJoin(Pipeline, 'p', 'p.id = j.pipeline_id')
      .where('p.project_id = :projectId AND p.sha = :sha', { projectId: view.project.id, sha: commit.id });
    if (params.pipeline_id !== undefined)
      query.andWhere('p.id = :pipelineId', { pipelineId: params.pipeline_id });
    if (params.all !== true) query.andWhere('j.retried = false');
    if (params.ref) query.andWhere('j.ref = :ref', { ref: params.ref });
    if (params.stage) query.andWhere('j.stage = :stage', { stage: params.stage });
    if (params.name) query.andWhere('j.name = :name', { name: params.name });
    const direction = params.sort === 'desc' ? 'DESC' : 'ASC';
    if (params.order_by === 'pipeline_id')
      query.orderBy('j.pipeline_id', direction).addOrderBy('j.id', direction);
    else query.orderBy('j.id', direction);
    return paginateOffset(query, params, request);
  }

  /** The users who posted or ran these jobs, by id. */
  async authors(jobs: Job[]): Promise<Map<number, User>> {
    const ids = [...new Set(jobs.flatMap((job) => (job.userId === null ? [] : [job.userId])))];
    if (ids.length === 0) return new Map();
    const users = await this.core.dataSource.getRepository(User).findBy({ id: In(ids) });
    return new Map(users.map((user) => [user.id, user]));
  }
}
