/**
 * The pipelines of merge requests: listing them, creating merge request pipelines (on request, when a
 * merge request is opened, and when its source branch moves), and letting a waiting automatic merge
 * through when its head pipeline finishes.
 */
import { In, type EntityManager } from 'typeorm';
import { canProject } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, methodNotAllowed } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import { ZERO_SHA } from '../git/ref-changes.js';
import type { MergeRequestFields } from '../merge_requests/extension-points.js';
import { MergeRequest } from '../merge_requests/merge-request.entity.js';
import { Pipeline } from '../pipelines/pipeline.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { RefsUpdated } from '../repository/repositories.events.js';
import { User } from '../users/user.entity.js';
import type { MergeRequestPipelineRequested } from './merge-request-pipelines.events.js';
import { headPipelineFields } from './merge-request-extensions.js';
import { mergeRequestPipelinesSql } from './merge-request-pipelines.sql.js';

const HEADS = 'refs/heads/';

type Deps = Pick<
  ServiceRegistry,
  'mergeRequests' | 'mergeRequestVersions' | 'pipelines' | 'projects' | 'repositories'
>;

/** GitLab's ref of a merge request pipeline: the merge request's head ref, not the branch. */
export const mergeRequestRef = (iid: number) => `refs/merge-requests/${iid}/head`;

export class MergeRequestPipelinesService {
  /** `head_pipeline` and `pipeline` of each merge request (`mergeRequestFields`). */
  readonly fields: MergeRequestFields;

  constructor(
    private readonly core: CoreDeps,
    private readonly services: Deps,
  ) {
    this.fields = headPipelineFields(core.dataSource, core.config);
  }

  /** `GET …/merge_requests/:iid/pipelines`: the merge request's pipelines, newest first. */
  async list(
    view: ProjectView,
    iid: number,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<Pipeline>> {
    const mr = await this.services.mergeRequests.find(view, iid);
    const query = this.core.dataSource
      .getRepository(Pipeline)
      .createQueryBuilder('p')
      .innerJoin(MergeRequest, 'mr', 'mr.id = :mrId', { mrId: mr.id })
      .where(mergeRequestPipelinesSql('p', 'mr'))
      .orderBy('p.id', 'DESC');
    return paginateOffset(query, params, request);
  }

  /** The full paths of these pipelines' projects (a fork's merge request runs in the fork), by id. */
  async projectPaths(view: ProjectView, pipelines: Pipeline[]): Promise<Map<number, string>> {
    const paths = new Map([[view.project.id, `${view.project.namespace.fullPath}/${view.project.path}`]]);
    const others = [...new Set(pipelines.map((p) => p.projectId))].filter((id) => !paths.has(id));
    if (others.length === 0) return paths;
    const rows = (await this.core.dataSource.query(
      `SELECT p.id, n.full_path || '/' || p.path AS full_path FROM projects p
       JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = ANY($1)`,
      [others],
    )) as Array<{ id: number; full_path: string }>;
    for (const row of rows) paths.set(row.id, row.full_path);
    return paths;
  }

  /** The user a pipeline of this page names, by id. */
  async users(pipelines: Pipeline[]): Promise<Map<number, User>> {
    const ids = [...new Set(pipelines.flatMap((p) => (p.userId === null ? [] : [p.userId])))];
    if (ids.length === 0) return new Map();
    const users = await this.core.dataSource.getRepository(User).findBy({ id: In(ids) });
    return new Map(users.map((user) => [user.id, user]));
  }

  /**
   * `POST …/merge_requests/:iid/pipelines`: a merge request pipeline on the source head, as the caller;
   * with `async`, queued instead (null).
   */
  async create(caller: Caller, view: ProjectView, iid: number, async: boolean): Promise<Pipeline | null> {
    const mr = await this.services.mergeRequests.find(view, iid);
    if (mr.state !== 'opened') throw methodNotAllowed();
    const source = await this.sourceView(caller, view, mr);
    if (!source || !canProject(caller, 'create_pipeline', this.services.projects.subject(source)))
      throw methodNotAllowed();
    const head = await this.sourceHead(source, mr);
    if (!head) throw methodNotAllowed();
    if (async) {
      await this.core.dataSource.transaction((tx) =>
        this.request(tx, { mergeRequestId: mr.id, userId: caller.user!.id, sha: head, requested: true }),
      );
      return null;
    }
    const result = await this.createFor(source, mr, head, caller.user);
    if ('errors' in result) throw new ApiError(400, { message: { base: result.errors } });
    return result.pipeline;
  }

  /** The merge request's source project as the caller sees it (the target itself unless a fork). */
  private async sourceView(caller: Caller, view: ProjectView, mr: MergeRequest): Promise<ProjectView | null> {
    if (mr.sourceProjectId === null) return null;
    if (mr.sourceProjectId === view.project.id) return view;
    return this.services.projects.find(caller, mr.sourceProjectId).catch(() => null);
  }

  private async sourceHead(source: ProjectView, mr: MergeRequest): Promise<string | null> {
    return this.services.repositories.open(source).git.resolveCommit(`${HEADS}${mr.sourceBranch}`);
  }

  private async createFor(source: ProjectView, mr: MergeRequest, sha: string, user: User | null) {
    const manager = this.core.dataSource.manager;
    const diff = (await this.services.mergeRequestVersions.latest(manager, [mr.id])).get(mr.id);
    const base = diff?.baseCommitSha ?? diff?.startCommitSha ?? null;
    return this.services.pipelines.create({
      project: source,
      ref: mergeRequestRef(mr.iid),
      sha,
      user,
      source: 'merge_request_event',
      // `rules: changes` of a merge request pipeline compare with the merge request's base.
      changedPaths: base ? await this.changedPaths(source, base, sha) : null,
      mergeRequest: {
        id: mr.id,
        iid: mr.iid,
        sourceBranch: mr.sourceBranch,
        targetBranch: mr.targetBranch,
        sha,
        diffBaseSha: base ?? sha,
      },
    });
  }

  /** The paths changed from `base` to `sha`; null when unknown (a base the repository lacks, a diff too large). */
  private async changedPaths(source: ProjectView, base: string, sha: string): Promise<string[] | null> {
    const git = this.services.repositories.open(source).git;
    const result = await git.diffs(base, sha).catch(() => null);
    if (!result || result.overflow) return null;
    return [...new Set(result.diffs.flatMap((d) => [d.oldPath, d.newPath]))];
  }

  /** Queues a merge request pipeline, in the transaction of the change that calls for it. */
  request(tx: EntityManager, payload: MergeRequestPipelineRequested): Promise<void> {
    return this.core.events.publish(tx, 'merge_request_pipelines.create_requested', payload);
  }

  /** A merge request was opened (its creation's transaction): a pipeline for its head, if the configuration has one. */
  async created(tx: EntityManager, mergeRequestId: number): Promise<void> {
    const mr = await tx.getRepository(MergeRequest).findOneBy({ id: mergeRequestId });
    if (!mr) return;
    await this.request(tx, { mergeRequestId, userId: mr.authorId, sha: mr.headSha, requested: false });
  }

  /** After a push: a pipeline for each open merge request whose source branch moved, on its new head. */
  async afterPush(event: RefsUpdated): Promise<void> {
    const moved = event.changes.filter((c) => c.ref.startsWith(HEADS) && c.after !== ZERO_SHA);
    if (moved.length === 0) return;
    await this.core.dataSource.transaction(async (tx) => {
      for (const change of moved) {
        const rows = (await tx.query(
          `SELECT id FROM merge_requests WHERE source_project_id = $1 AND source_branch = $2 AND state = 'opened'`,
          [event.projectId, change.ref.slice(HEADS.length)],
        )) as Array<{ id: number }>;
        for (const { id } of rows)
          await this.request(tx, {
            mergeRequestId: id,
            userId: event.userId,
            sha: change.after,
            requested: false,
          });
      }
    });
  }

  /**
   * The queued creation. On its own (not `requested`) it is silent: a configuration without jobs for merge
   * request pipelines makes none, and a head that already has one (a repeated job) makes no second.
   */
  async runRequested({
    mergeRequestId,
    userId,
    sha,
    requested,
  }: MergeRequestPipelineRequested): Promise<void> {
    const mr = await this.core.dataSource.getRepository(MergeRequest).findOneBy({ id: mergeRequestId });
    if (!mr || mr.state !== 'opened' || mr.sourceProjectId === null) return;
    const user =
      userId === null ? null : await this.core.dataSource.getRepository(User).findOneBy({ id: userId });
    const caller: Caller = { user: user?.state === 'active' ? user : null, token: null };
    if (!caller.user) return;
    const source = await this.services.projects.find(caller, mr.sourceProjectId).catch(() => null);
    if (!source || !canProject(caller, 'create_pipeline', this.services.projects.subject(source))) return;
    const head = sha ?? (await this.sourceHead(source, mr));
    if (!head) return;
    if (!requested) {
      const [{ exists }] = (await this.core.dataSource.query(
        `SELECT EXISTS (SELECT 1 FROM ci_pipelines WHERE merge_request_id = $1 AND sha = $2
           AND source = 'merge_request_event') AS exists`,
        [mr.id, head],
      )) as Array<{ exists: boolean }>;
      if (exists) return;
    }
    const result = await this.createFor(source, mr, head, caller.user);
    if ('errors' in result)
      this.core.logger.debug({ mergeRequestId, errors: result.errors }, 'no merge request pipeline');
  }

  /**
   * A pipeline's status changed: the open merge requests with an automatic merge whose head pipeline it
   * is are tried again (the merge itself decides whether the checks now pass).
   */
  async afterStatusChange(pipelineId: number): Promise<void> {
    await this.core.dataSource.transaction(async (tx) => {
      const rows = (await tx.query(
        `SELECT mr.id FROM ci_pipelines p JOIN merge_requests mr ON mr.head_sha = p.sha
         WHERE p.id = $1 AND mr.state = 'opened' AND mr.merge_when_pipeline_succeeds
           AND ${mergeRequestPipelinesSql('p', 'mr')}`,
        [pipelineId],
      )) as Array<{ id: number }>;
      for (const { id } of rows)
        await this.core.events.publish(tx, 'merge_request.auto_merge_check', { mergeRequestId: id });
    });
  }
}
