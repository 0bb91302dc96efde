/**
 * Merging a merge request (`PUT …/merge`), its merge ref (`GET …/merge_ref`), rebasing on the queue
 * (`PUT …/rebase`), and what follows a merge (removing the source branch). Git work happens outside
 * database transactions; the target branch moves through the push rules as a merge.
 */
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { canPushCode } from '../repository/abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, conflict, forbidden, methodNotAllowed, unauthorized } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { ZERO_SHA } from '../git/ref-changes.js';
import { RefUpdateRefused, type OpenRepository } from '../repository/repositories.service.js';
import { READ_ONLY_MESSAGE } from '../repository_storage_moves/write-gate.js';
import type { GitRepository } from '../git/repository.js';
import type { ProjectView } from '../projects/projects.service.js';
import { recordStateChange } from '../resource_events/record.js';
import { projectSettings, type ProjectSettings } from '../projects/project-settings.js';
import { User } from '../users/user.entity.js';
import { defaultMergeMessage, type MessageFacts } from './commit-messages.js';
import { MergeRequest, type AutoMergeParams } from './merge-request.entity.js';
import type { MergeRequestDetailRecords, MergeRequestProject } from './merge-request-records.js';
import { branchCannotBeMerged, writeMergeCommits, type MergeCommits } from './merge-strategies.js';

const HEADS = 'refs/heads/';

export interface MergeParams {
  merge_commit_message?: string;
  squash_commit_message?: string;
  squash?: boolean;
  should_remove_source_branch?: boolean;
  sha?: string;
  auto_merge?: boolean;
  merge_when_pipeline_succeeds?: boolean;
}

const notMergeable = () => new ApiError(400, { message: 'Merge request is not mergeable' });

/** GitLab's `squash_on_merge?`: the project's `squash_option` decides unless it leaves it to the merge request. */
export function squashOnMerge(option: ProjectSettings['squash_option'], requested: boolean): boolean {
  if (option === 'always') return true;
  if (option === 'never') return false;
  return requested;
}

interface ProjectRow {
  id: number;
  repositoryStorage: string;
  defaultBranch: string | null;
}

export class MergeRequestMerging {
  private readonly dataSource: DataSource;
  private readonly events: Events;
  private readonly externalUrl: string;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<
      ServiceRegistry,
      'repositories' | 'mergeRequests' | 'mergeRequestVersions' | 'projects' | 'protectedRefs'
    >,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
    this.externalUrl = deps.config.externalUrl;
  }

  private async user(id: number | null): Promise<User | null> {
    return id === null ? null : this.dataSource.getRepository(User).findOneBy({ id });
  }

  private async projectRow(id: number): Promise<ProjectRow | null> {
    const [row] = (await this.dataSource.query(
      `SELECT id, repository_storage, default_branch FROM projects WHERE id = $1`,
      [id],
    )) as Array<{ id: number; repository_storage: string; default_branch: string | null }>;
    return row
      ? { id: row.id, repositoryStorage: row.repository_storage, defaultBranch: row.default_branch }
      : null;
  }

  /** The source branch's repository: the target's own, or the fork's. */
  private async sourceGit(mr: MergeRequest, target: OpenRepository): Promise<GitRepository | null> {
    if (mr.sourceProjectId === mr.targetProjectId) return target.git;
    // A deleted fork leaves its merge requests without a source.
    const row = mr.sourceProjectId === null ? null : await this.projectRow(mr.sourceProjectId);
    return row ? this.services.repositories.gitOf(row) : null;
  }

  /** The source branch's project as the caller sees it: this one, the fork, or null when gone or hidden. */
  private async sourceView(caller: Caller, view: ProjectView, mr: MergeRequest): Promise<ProjectView | null> {
    if (mr.sourceProjectId === view.project.id) return view;
    if (mr.sourceProjectId === null) return null;
    return this.services.projects.find(caller, mr.sourceProjectId).catch(() => null);
  }

  /** GitLab's `can_be_merged_by?`: the target branch's merge levels (Developer when unprotected). */
  private async mayMerge(caller: Caller, view: ProjectView, branch: string): Promise<boolean> {
    const rules = this.services.protectedRefs;
    return rules.mayMerge(view.project.id, await rules.actor(caller, view.accessLevel), branch);
  }

  /** Records what a merge attempt found, for the head it read (a newer head has its own check). */
  private async markConflicting(mergeRequestId: number, head: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE merge_requests SET merge_status = 'cannot_be_merged' WHERE id = $1 AND head_sha = $2`,
      [mergeRequestId, head],
    );
  }

  /**
   * The merge request's head after catching up with its source branch: a push the queue has not
   * followed yet is followed now, so a merge never takes a head the merge request does not show.
   */
  private async currentHead(repository: OpenRepository, mr: MergeRequest): Promise<MergeRequest | null> {
    const sourceGit = await this.sourceGit(mr, repository);
    const head = sourceGit ? await sourceGit.resolveCommit(`${HEADS}${mr.sourceBranch}`) : null;
    if (!head) return null;
    if (head === mr.headSha) return mr;
    await this.services.mergeRequestVersions.followSource(sourceGit!, repository.git, mr);
    const fresh = await this.dataSource.getRepository(MergeRequest).findOneByOrFail({ id: mr.id });
    return fresh.headSha === head && (await repository.git.resolveCommit(head)) ? fresh : null;
  }

  async merge(
    caller: Caller,
    view: ProjectView,
    iid: number,
    params: MergeParams,
  ): Promise<MergeRequestDetailRecords> {
    const found = await this.services.mergeRequests.find(view, iid);
    const repository = this.services.repositories.open(view);
    if (!(await this.mayMerge(caller, view, found.targetBranch))) throw unauthorized();
    await this.services.repositories.serializeRef(repository, `${HEADS}${found.targetBranch}`, () =>
      this.mergeNow(caller, view, repository, found.id, params),
    );
    return this.services.mergeRequests.get(caller, view, iid);
  }

  private async mergeNow(
    caller: Caller,
    view: ProjectView,
    repository: OpenRepository,
    id: number,
    params: MergeParams,
  ): Promise<void> {
    const settings = projectSettings(view.project.settings);
    const { git } = repository;
    let mr = await this.dataSource.getRepository(MergeRequest).findOneByOrFail({ id });
    if (mr.state !== 'opened') throw methodNotAllowed();
    const target = await git.resolveCommit(`${HEADS}${mr.targetBranch}`);
    const current = await this.currentHead(repository, mr);
    if (!target || !current?.headSha) throw methodNotAllowed();
    mr = current;
    const head = current.headSha;
    const mergeRequests = this.services.mergeRequests;
    const records = await mergeRequests.related(this.dataSource.manager, [mr]);
    // Checks that can pass later, which an automatic merge waits for (approvals among them).
    const pending = mergeRequests.extensions.blockingChecks(mr, records).length > 0;
    const auto = params.auto_merge === true || params.merge_when_pipeline_succeeds === true;
    if (pending && !auto) throw methodNotAllowed();
    const fastForward = await git.isAncestor(target, head);
    if (settings.merge_method !== 'merge' && !fastForward) throw methodNotAllowed();
    if (!fastForward && !(await git.mergedTree(target, head))) {
      await this.markConflicting(mr.id, head);
      throw branchCannotBeMerged();
    }
    if (params.sha !== undefined && params.sha !== head)
      throw conflict(`SHA does not match HEAD of source branch: ${head}`);
    if (pending) {
      await this.setAutoMerge(caller, mr, head, params);
      return;
    }
    for (const hooks of mergeRequests.extensions.hooks) await hooks.beforeMerge?.(caller, mr);
    const project = records.projects.get(mr.targetProjectId)!;
    await this.mergeCommits(caller, view, repository, { mr, project, target, head }, params);
  }

  /** Writes the merge's commits, moves the target branch, and records the merge. */
  private async mergeCommits(
    caller: Caller,
    view: ProjectView,
    repository: OpenRepository,
    {
      mr,
      project,
      target,
      head,
    }: { mr: MergeRequest; project: MergeRequestProject; target: string; head: string },
    params: MergeParams,
  ): Promise<void> {
    const settings = projectSettings(view.project.settings);
    const { git } = repository;
    const merger = caller.user!;
    const author = (await this.user(mr.authorId)) ?? merger;
    const squash = squashOnMerge(settings.squash_option, params.squash ?? mr.squash);
    const base = await git.mergeBase([target, head]);
    const commits = (
      await git.log({ revisions: [base ? `${base}..${head}` : head], maxCount: 1000 })
    ).reverse();
    const facts: MessageFacts = {
      sourceBranch: mr.sourceBranch,
      targetBranch: mr.targetBranch,
      title: mr.title,
      description: mr.description,
      reference: `${project.fullPath}!${mr.iid}`,
      localReference: `!${mr.iid}`,
      sourceProjectId: mr.sourceProjectId ?? mr.targetProjectId,
      url: `${this.externalUrl}/${project.fullPath}/-/merge_requests/${mr.iid}`,
      mergedBy: { name: merger.name, email: merger.email },
      commits: commits.map((commit) => ({
        message: commit.message,
        authorName: commit.authorName,
        authorEmail: commit.authorEmail,
      })),
    };
    const written = await writeMergeCommits({
      git,
      settings,
      target,
      head,
      base,
      facts,
      squash,
      author: { name: author.name, email: author.email },
      committer: { name: merger.name, email: merger.email },
      messages: params,
    });
    const removeSource =
      (params.should_remove_source_branch ?? mr.shouldRemoveSourceBranch ?? mr.forceRemoveSourceBranch) ===
        true && (await this.mayRemoveSourceBranch(caller, view, mr));
    await this.moveTarget(caller, repository, mr, target, written.newTarget);
    await this.markMerged(
      mr,
      merger.id,
      { ...written, squash, removeSourceAt: removeSource ? head : null },
      params,
    );
  }

  /** The target branch moves through the push rules, as a merge. */
  private async moveTarget(
    caller: Caller,
    repository: OpenRepository,
    mr: MergeRequest,
    target: string,
    newTarget: string,
  ): Promise<void> {
    try {
      await this.services.repositories.updateRefs(
        caller,
        repository,
        [{ ref: `${HEADS}${mr.targetBranch}`, oldSha: target, newSha: newTarget }],
        { merging: true },
      );
    } catch (err) {
      if (!(err instanceof RefUpdateRefused)) throw err;
      if (err.conflict)
        throw conflict('Branch has been updated since the merge was requested. Please review the changes.');
      // A repository being moved refuses as every other API write does (400 with GitLab's message).
      if (err.reason === READ_ONLY_MESSAGE) throw new ApiError(400, { message: err.reason });
      throw unauthorized();
    }
  }

  private async markMerged(
    mr: MergeRequest,
    mergerId: number,
    merged: MergeCommits & { squash: boolean; removeSourceAt: string | null },
    params: MergeParams,
  ): Promise<void> {
    const now = new Date();
    await this.dataSource.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM merge_requests WHERE id = $1 FOR UPDATE`, [mr.id]);
      await tx.getRepository(MergeRequest).update(mr.id, {
        state: 'merged',
        mergedAt: now,
        updatedAt: now,
        mergeUserId: mergerId,
        mergeCommitSha: merged.mergeCommitSha,
        squashCommitSha: merged.squashCommitSha,
        squash: merged.squash,
        ...(params.should_remove_source_branch !== undefined
          ? { shouldRemoveSourceBranch: params.should_remove_source_branch }
          : {}),
        mergeStatus: 'can_be_merged',
        mergeError: null,
        autoMerge: false,
        mergeParams: null,
      });
      await recordStateChange(tx, { mergeRequestId: mr.id, userId: mergerId, at: now }, 'merged');
      await this.events.publish(tx, 'merge_request.changed', {
        mergeRequestId: mr.id,
        changeId: randomUUID(),
        actorId: mergerId,
        at: now.toISOString(),
        changes: { state: 'merged' },
      });
      await this.events.publish(tx, 'merge_request.merged', {
        mergeRequestId: mr.id,
        userId: mergerId,
        removeSourceBranchAt: merged.removeSourceAt,
      });
      for (const hooks of this.services.mergeRequests.extensions.hooks)
        await hooks.merged?.(tx, mr, mergerId);
    });
  }

  /**
   * Sets the automatic merge: the merge request merges as `caller`, with these parameters, when the checks
   * that are pending pass; a new head before then cancels it. Tries at `merge_after`, if that is pending.
   */
  private async setAutoMerge(caller: Caller, mr: MergeRequest, head: string, params: MergeParams) {
    const mergeParams: AutoMergeParams = {
      sha: head,
      ...(params.merge_commit_message !== undefined
        ? { merge_commit_message: params.merge_commit_message }
        : {}),
      ...(params.squash_commit_message !== undefined
        ? { squash_commit_message: params.squash_commit_message }
        : {}),
      ...(params.squash !== undefined ? { squash: params.squash } : {}),
      ...(params.should_remove_source_branch !== undefined
        ? { should_remove_source_branch: params.should_remove_source_branch }
        : {}),
    };
    await this.dataSource.transaction(async (tx) => {
      await tx.getRepository(MergeRequest).update(mr.id, {
        autoMerge: true,
        mergeParams,
        mergeUserId: caller.user!.id,
        updatedAt: new Date(),
      });
      await this.scheduleAutoMerge(tx, mr);
    });
  }

  private async scheduleAutoMerge(tx: EntityManager, mr: MergeRequest): Promise<void> {
    const later = mr.mergeAfter && mr.mergeAfter.getTime() > Date.now() ? mr.mergeAfter : undefined;
    if (later)
      await this.events.publish(
        tx,
        'merge_request.auto_merge_check',
        { mergeRequestId: mr.id },
        { startAfter: later },
      );
  }

  /**
   * The queued attempt of an automatic merge, after anything that may have let it through: merges as the
   * user who set it, waits while checks are pending, and gives up (clearing it) when the head moved, the
   * branch conflicts, or the user may no longer merge.
   */
  async tryAutoMerge(mergeRequestId: number): Promise<void> {
    const mr = await this.dataSource.getRepository(MergeRequest).findOneBy({ id: mergeRequestId });
    if (!mr || !mr.autoMerge || mr.state !== 'opened' || !mr.mergeParams) return;
    const user = await this.user(mr.mergeUserId);
    const caller: Caller = { user: user?.state === 'active' ? user : null, token: null };
    const view = caller.user
      ? await this.services.projects.find(caller, mr.targetProjectId).catch(() => null)
      : null;
    if (!view) return this.clearAutoMerge(mr.id);
    try {
      await this.merge(caller, view, mr.iid, mr.mergeParams);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.status === 405) {
        // Still waiting; a later `merge_after` is tried when it comes.
        await this.dataSource.transaction((tx) => this.scheduleAutoMerge(tx, mr));
        return;
      }
      await this.clearAutoMerge(mr.id);
    }
  }

  private async clearAutoMerge(mergeRequestId: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE merge_requests SET merge_when_pipeline_succeeds = false, merge_params = NULL, merge_user_id = NULL
       WHERE id = $1 AND state = 'opened'`,
      [mergeRequestId],
    );
  }

  /** `POST …/cancel_merge_when_pipeline_succeeds`: 405 when no longer open, 406 without an automatic merge. */
  async cancelAutoMerge(caller: Caller, view: ProjectView, iid: number): Promise<MergeRequestDetailRecords> {
    const mr = await this.services.mergeRequests.find(view, iid);
    // GitLab's `can_cancel_auto_merge?`: whoever may merge, or the user who set it.
    const setter = mr.autoMerge && mr.mergeUserId === caller.user?.id;
    if (!setter && !(await this.mayMerge(caller, view, mr.targetBranch))) throw unauthorized();
    if (mr.state !== 'opened') throw methodNotAllowed();
    if (!mr.autoMerge) throw new ApiError(406, { message: "Can't cancel the automatic merge" });
    await this.clearAutoMerge(mr.id);
    return this.services.mergeRequests.get(caller, view, iid);
  }

  /**
   * GitLab's `can_remove_source_branch?`: not the source project's default branch, not protected, and the
   * merger may push to the source project.
   */
  private async mayRemoveSourceBranch(caller: Caller, view: ProjectView, mr: MergeRequest): Promise<boolean> {
    const source = await this.sourceView(caller, view, mr);
    if (!source || !canPushCode(caller, source.accessLevel)) return false;
    if (mr.sourceBranch === source.project.defaultBranch) return false;
    return !(await this.services.protectedRefs.isProtectedBranch(source.project.id, mr.sourceBranch));
  }

  /** After a merge: removes the source branch if asked to and it still points at the merged head. */
  async afterMerge(mergeRequestId: number, userId: number | null, removeAt: string | null): Promise<void> {
    if (!removeAt) return;
    const mr = await this.dataSource.getRepository(MergeRequest).findOneBy({ id: mergeRequestId });
    if (!mr) return;
    const project = mr.sourceProjectId === null ? null : await this.projectRow(mr.sourceProjectId);
    if (!project) return;
    const git = this.services.repositories.gitOf(project);
    const ref = `${HEADS}${mr.sourceBranch}`;
    if ((await git.resolveCommit(ref)) !== removeAt) return;
    const change = { ref, oldSha: removeAt, newSha: ZERO_SHA };
    if (!(await git.applyRefUpdates([change]))) return;
    await this.services.repositories.recordPush(project, userId, [change], 'api');
  }

  /**
   * `GET …/merge_ref`: the commit that merging would make, kept at `refs/merge-requests/:iid/merge`
   * and made again only when the target or the head moved.
   */
  async mergeRef(view: ProjectView, iid: number): Promise<string> {
    const found = await this.services.mergeRequests.find(view, iid);
    if (found.state !== 'opened') throw notMergeable();
    const repository = this.services.repositories.open(view);
    const { git } = repository;
    const target = await git.resolveCommit(`${HEADS}${found.targetBranch}`);
    const mr = await this.currentHead(repository, found);
    if (!target || !mr?.headSha) throw notMergeable();
    const head = mr.headSha;
    const existing = await git.mergeRequestMergeRef(mr.iid);
    if (existing && existing.parents[0] === target && existing.parents[1] === head) return existing.sha;
    const tree = await git.mergedTree(target, head);
    if (!tree) {
      await this.markConflicting(mr.id, head);
      throw notMergeable();
    }
    const author = (await this.user(mr.authorId)) ?? { name: 'GitLab', email: 'noreply@gitlab.com' };
    const identity = { name: author.name, email: author.email };
    const sha = await git.writeCommit({
      tree,
      parents: [target, head],
      message: defaultMergeMessage({
        sourceBranch: mr.sourceBranch,
        targetBranch: mr.targetBranch,
        title: mr.title,
        reference: `${view.project.namespace.fullPath}/${view.project.path}!${mr.iid}`,
      }),
      author: identity,
      committer: identity,
    });
    await git.setMergeRequestMergeRef(mr.iid, sha);
    return sha;
  }

  /**
   * `PUT …/rebase`: marks the rebase in progress and queues it. The caller must be able to push to the
   * source branch, as GitLab requires.
   */
  async requestRebase(caller: Caller, view: ProjectView, iid: number): Promise<boolean> {
    const mr = await this.services.mergeRequests.find(view, iid);
    if (!(await this.mayPushToSource(caller, view, mr))) throw forbidden('Cannot push to source branch');
    if (mr.state !== 'opened') throw forbidden('Cannot push to source branch');
    await this.dataSource.transaction(async (tx) => {
      await tx.query(
        `UPDATE merge_requests SET rebase_in_progress = true, merge_error = NULL WHERE id = $1`,
        [mr.id],
      );
      await this.events.publish(tx, 'merge_request.rebase_requested', {
        mergeRequestId: mr.id,
        userId: caller.user!.id,
      });
    });
    return true;
  }

  private async mayPushToSource(caller: Caller, view: ProjectView, mr: MergeRequest): Promise<boolean> {
    const source = await this.sourceView(caller, view, mr);
    if (!source) return false;
    const rules = this.services.protectedRefs;
    const actor = await rules.actor(caller, source.accessLevel);
    return rules.mayPush(source.project.id, actor, mr.sourceBranch);
  }

  /** The queued rebase: replays the source branch onto the target and moves it, or records why not. */
  async runRebase(mergeRequestId: number, userId: number): Promise<void> {
    const mr = await this.dataSource.getRepository(MergeRequest).findOneBy({ id: mergeRequestId });
    if (!mr || !mr.rebaseInProgress) return;
    let error: string | null = null;
    try {
      error = await this.rebaseNow(mr, userId);
    } finally {
      await this.dataSource.query(
        `UPDATE merge_requests SET rebase_in_progress = false, merge_error = $2 WHERE id = $1`,
        [mr.id, error],
      );
    }
  }

  private async rebaseNow(mr: MergeRequest, userId: number): Promise<string | null> {
    const failed = 'Rebase failed: Rebase locally, resolve all conflicts, then push the branch.';
    if (mr.state !== 'opened') return null;
    const [targetRow, sourceRow, user] = await Promise.all([
      this.projectRow(mr.targetProjectId),
      mr.sourceProjectId === null ? null : this.projectRow(mr.sourceProjectId),
      this.user(userId),
    ]);
    if (!targetRow || !sourceRow || !user) return null;
    const targetGit = this.services.repositories.gitOf(targetRow);
    const sourceGit = this.services.repositories.gitOf(sourceRow);
    const ref = `${HEADS}${mr.sourceBranch}`;
    const [target, head] = await Promise.all([
      targetGit.resolveCommit(`${HEADS}${mr.targetBranch}`),
      sourceGit.resolveCommit(ref),
    ]);
    if (!target || !head) return failed;
    // A fork needs the target's commits before it can replay onto them.
    if (!(await sourceGit.resolveCommit(target))) return failed;
    if (await sourceGit.isAncestor(target, head)) return null;
    const result = await sourceGit.rebase(target, head, { name: user.name, email: user.email });
    if ('conflict' in result) return failed;
    const change = { ref, oldSha: head, newSha: result.sha, forced: true };
    if (!(await sourceGit.applyRefUpdates([change]))) return failed;
    await this.services.repositories.recordPush(sourceRow, userId, [change], 'api');
    // The new head shows before `rebase_in_progress` clears, so whoever waited for it merges the right head.
    await this.services.mergeRequestVersions.followSource(sourceGit, targetGit, mr);
    return null;
  }
}
