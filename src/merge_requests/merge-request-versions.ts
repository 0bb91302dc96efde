/**
 * What keeps merge requests in step with their branches: diff versions, `refs/merge-requests/:iid/head`,
 * the merge status check, and pushes to a source or target branch (GitLab's refresh after a push).
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { Events } from '../core/events.js';
import type { CoreDeps } from '../core/family.js';
import { EMPTY_TREE } from '../git/diffs.js';
import type { RefsUpdated } from '../repository/repositories.events.js';
import type { RepositoriesService } from '../repository/repositories.service.js';
import type { GitRepository } from '../git/repository.js';
import { recordStateChange } from '../resource_events/record.js';
import { MergeRequest, MergeRequestDiff } from './merge-request.entity.js';
import './merge-requests.events.js';

const HEADS = 'refs/heads/';
const ZERO_SHA = '0'.repeat(40);

/** A diff version computed from git, before it is stored. */
export interface ComputedVersion {
  baseCommitSha: string | null;
  startCommitSha: string;
  headCommitSha: string;
  patchIdSha: string | null;
  realSize: number;
  commitsCount: number;
  state: MergeRequestDiff['state'];
}

interface ProjectRow {
  id: number;
  repository_storage: string;
  merge_method: string | null;
}

export class MergeRequestVersions {
  private readonly dataSource: DataSource;
  private readonly events: Events;

  constructor(
    deps: CoreDeps,
    private readonly repositories: RepositoriesService,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
  }

  /** The version of `head` against `start`: merge base, size, commits and patch ID. */
  async compute(git: GitRepository, start: string, head: string): Promise<ComputedVersion> {
    const base = await git.mergeBase([start, head]);
    const { diffs, overflow } = await git.diffs(base ?? EMPTY_TREE, head);
    const [patchIdSha, commitsCount] = await Promise.all([
      diffs.length === 0 ? Promise.resolve(null) : git.patchId(base ?? EMPTY_TREE, head),
      git.countCommits(base, head),
    ]);
    return {
      baseCommitSha: base,
      startCommitSha: start,
      headCommitSha: head,
      patchIdSha,
      realSize: diffs.length,
      commitsCount,
      state: overflow ? 'overflow' : diffs.length === 0 ? 'empty' : 'collected',
    };
  }

  /**
   * Stores a version as the merge request's latest in `tx` (which must hold the merge request's row),
   * marks it unchecked and queues its check.
   */
  async store(tx: EntityManager, mergeRequestId: number, version: ComputedVersion): Promise<void> {
    await tx.getRepository(MergeRequestDiff).insert({ mergeRequestId, ...version });
    await tx
      .getRepository(MergeRequest)
      .update(mergeRequestId, { headSha: version.headCommitSha, mergeStatus: 'unchecked', mergeError: null });
    await this.requestCheck(tx, mergeRequestId);
  }

  requestCheck(tx: EntityManager, mergeRequestId: number): Promise<void> {
    return this.events.publish(tx, 'merge_request.merge_status_check_requested', { mergeRequestId });
  }

  /** The latest version of each of the merge requests, in one query. */
  async latest(manager: EntityManager, ids: number[]): Promise<Map<number, MergeRequestDiff>> {
    if (ids.length === 0) return new Map();
    const rows = await manager
      .getRepository(MergeRequestDiff)
      .createQueryBuilder('d')
      .distinctOn(['d.merge_request_id'])
      .where('d.merge_request_id IN (:...ids)', { ids })
      .orderBy('d.merge_request_id')
      .addOrderBy('d.id', 'DESC')
      .getMany();
    return new Map(rows.map((row) => [row.mergeRequestId, row]));
  }

  private async project(projectId: number): Promise<ProjectRow | null> {
    const [row] = (await this.dataSource.query(
      `SELECT id, repository_storage, settings->>'merge_method' AS merge_method FROM projects WHERE id = $1`,
      [projectId],
    )) as ProjectRow[];
    return row ?? null;
  }

  /**
   * After a push: a moved source branch gives its open merge requests a new version and head ref; a moved
   * target branch makes them unchecked, and merged when the push brought in their head. A fork's source
   * branch moves merge requests in other projects of its fork network: their head is fetched into the
   * target's repository first. Safe to repeat.
   */
  async refreshAfterPush(event: RefsUpdated): Promise<void> {
    const branches = event.changes.filter((change) => change.ref.startsWith(HEADS));
    if (branches.length === 0) return;
    const project = await this.project(event.projectId);
    if (!project) return;
    const git = this.gitOf(project);
    const names = branches.map((change) => change.ref.slice(HEADS.length));
    const open = await this.dataSource
      .getRepository(MergeRequest)
      .createQueryBuilder('mr')
      .where("mr.state = 'opened'")
      .andWhere(
        `((mr.source_project_id = :projectId AND mr.source_branch IN (:...names))
          OR (mr.target_project_id = :projectId AND mr.target_branch IN (:...names)))`,
        { projectId: project.id, names },
      )
      .getMany();
    for (const mr of open) {
      const sourceMoved = mr.sourceProjectId === project.id && names.includes(mr.sourceBranch);
      const targetChange =
        mr.targetProjectId === project.id
          ? branches.find((change) => change.ref === `${HEADS}${mr.targetBranch}`)
          : undefined;
      if (sourceMoved) {
        const target = mr.targetProjectId === project.id ? project : await this.project(mr.targetProjectId);
        if (target) await this.followSource(git, this.gitOf(target), mr);
      }
      if (targetChange) await this.followTarget(git, mr.id, targetChange, event.userId);
    }
  }

  private gitOf(project: ProjectRow): GitRepository {
    return this.repositories.gitOf({ id: project.id, repositoryStorage: project.repository_storage });
  }

  /**
   * The source head of a merge request, read in the source project's repository and present in the
   * target's (fetched there when the source is a fork); null when either branch is gone.
   */
  async heads(
    source: GitRepository,
    target: GitRepository,
    sourceBranch: string,
    targetBranch: string,
  ): Promise<{ head: string; start: string } | null> {
    const [head, start] = await Promise.all([
      source.resolveCommit(`${HEADS}${sourceBranch}`),
      target.resolveCommit(`${HEADS}${targetBranch}`),
    ]);
    if (!head || !start) return null;
    if (source.dir !== target.dir) await target.fetchCommit(source.dir, head);
    return { head, start };
  }

  /** A new version when the source head is no longer the latest version's head. */
  async followSource(source: GitRepository, git: GitRepository, mr: MergeRequest): Promise<void> {
    // A deleted branch leaves the merge request as it was, as GitLab does.
    const found = await this.heads(source, git, mr.sourceBranch, mr.targetBranch);
    if (!found) return;
    const { head, start } = found;
    const version = await this.compute(git, start, head);
    await this.dataSource.transaction(async (tx) => {
      const [row] = (await tx.query(`SELECT state FROM merge_requests WHERE id = $1 FOR UPDATE`, [
        mr.id,
      ])) as Array<{
        state: string;
      }>;
      if (row?.state !== 'opened') return;
      const latest = (await this.latest(tx, [mr.id])).get(mr.id);
      if (latest?.headCommitSha === head) return;
      await this.store(tx, mr.id, version);
    });
    await git.setMergeRequestRef(mr.iid, head);
  }

  /**
   * A target branch that received the merge request's head (the head is in the pushed range) means the
   * merge request was merged by that push; otherwise its mergeability is to be checked again.
   */
  private async followTarget(
    git: GitRepository,
    mergeRequestId: number,
    change: { before: string; after: string },
    userId: number | null,
  ): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const mr = await tx
        .getRepository(MergeRequest)
        .createQueryBuilder('mr')
        .setLock('pessimistic_write')
        .where('mr.id = :id', { id: mergeRequestId })
        .getOne();
      if (!mr || mr.state !== 'opened') return;
      const head = mr.headSha;
      const brought =
        head !== null &&
        change.after !== ZERO_SHA &&
        (await git.isAncestor(head, change.after)) &&
        (change.before === ZERO_SHA || !(await git.isAncestor(head, change.before)));
      if (brought) {
        const now = new Date();
        await tx.getRepository(MergeRequest).update(mr.id, {
          state: 'merged',
          mergedAt: now,
          mergeUserId: userId,
          mergeCommitSha: change.after,
          updatedAt: now,
        });
        await recordStateChange(tx, { mergeRequestId: mr.id, userId, at: now }, 'merged');
        return;
      }
      await tx.getRepository(MergeRequest).update(mr.id, { mergeStatus: 'unchecked', mergeError: null });
      await this.requestCheck(tx, mr.id);
    });
  }

  /**
   * The queued check: `checking` while it runs, then `can_be_merged` or `cannot_be_merged` with the reason,
   * for the head it read (a newer head has its own check queued). Keeps the head ref in step too.
   */
  async checkMergeStatus(mergeRequestId: number): Promise<void> {
    const mr = await this.dataSource.getRepository(MergeRequest).findOneBy({ id: mergeRequestId });
    if (!mr || mr.state !== 'opened' || !mr.headSha) return;
    const project = await this.project(mr.targetProjectId);
    if (!project) return;
    const git = this.gitOf(project);
    await this.dataSource.query(
      `UPDATE merge_requests SET merge_status = 'checking' WHERE id = $1 AND head_sha = $2`,
      [mr.id, mr.headSha],
    );
    const target = await git.resolveCommit(`${HEADS}${mr.targetBranch}`);
    let status: 'can_be_merged' | 'cannot_be_merged' = 'can_be_merged';
    let error: string | null = null;
    const diverged = target !== null && !(await git.isAncestor(target, mr.headSha));
    if (!target) {
      status = 'cannot_be_merged';
      error = `Target branch ${mr.targetBranch} does not exist`;
    } else if (diverged && !(await git.isAncestor(mr.headSha, target))) {
      const result = await git.mergeConflicts(target, mr.headSha);
      if (result.conflicts) {
        status = 'cannot_be_merged';
        error = result.error;
      }
    }
    await this.dataSource.transaction(async (tx) => {
      await tx.query(
        `UPDATE merge_requests SET merge_status = $3, merge_error = $4, diverged = $5
         WHERE id = $1 AND head_sha = $2`,
        [mr.id, mr.headSha, status, error, diverged],
      );
      if (mr.autoMerge && status === 'can_be_merged')
        await this.events.publish(tx, 'merge_request.auto_merge_check', { mergeRequestId: mr.id });
    });
    await git.setMergeRequestRef(mr.iid, mr.headSha);
  }
}
