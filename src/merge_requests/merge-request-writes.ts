/**
 * Opening, editing and deleting merge requests: the target project and fork network, duplicates,
 * assignees, reviewers, labels and milestones, and the events and system notes that follow.
 */
import { randomUUID } from 'node:crypto';
import { In, type DataSource, type EntityManager } from 'typeorm';
import { canProject, projectAccess, projectSubject, Visibility } from '../core/abilities.js';
import { canUpdateMergeRequest } from './abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, badParameter, forbidden, recordNotFound, validationFailed } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { isUniqueViolation } from '../db/errors.js';
import { nextInternalId } from '../db/internal-ids.js';
import type { GitRepository } from '../git/repository.js';
import type { ProjectView } from '../projects/projects.service.js';
import { projectSettings } from '../projects/project-settings.js';
import {
  recordLabelChanges,
  recordMilestoneChange,
  recordStateChange,
  type EventOrigin,
} from '../resource_events/record.js';
import { User } from '../users/user.entity.js';
import { MergeRequest } from './merge-request.entity.js';
import {
  assigneesOf,
  namesOf,
  storableDate,
  type CreateMergeRequestParams,
  type UpdateMergeRequestParams,
} from './merge-request-params.js';
import type { MergeRequestDetailRecords } from './merge-request-records.js';
import type { MergeRequestVersions } from './merge-request-versions.js';
import { isDraftTitle, stripDraft } from './merge-request-text.js';
import type { MergeRequestChanged } from './merge-requests.events.js';

const UPDATE_KEYS = [
  'add_labels',
  'allow_collaboration',
  'allow_maintainer_to_push',
  'assignee_id',
  'assignee_ids',
  'description',
  'discussion_locked',
  'labels',
  'merge_after',
  'milestone_id',
  'remove_labels',
  'remove_source_branch',
  'reviewer_ids',
  'squash',
  'state_event',
  'target_branch',
  'title',
] as const;

/** What an update sets, decided before its transaction. */
interface UpdateChange {
  state: MergeRequest['state'];
  targetBranch: string;
  title: string;
  assigneeIds: number[] | undefined;
  reviewerIds: number[] | undefined;
  milestoneId: number | null | undefined;
  allowCollaboration: boolean;
  version: Awaited<ReturnType<MergeRequestVersions['compute']>> | null;
}

export class MergeRequestWritesService {
  private readonly dataSource: DataSource;
  private readonly events: Events;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<
      ServiceRegistry,
      | 'mergeRequests'
      | 'mergeRequestVersions'
      | 'repositories'
      | 'labels'
      | 'milestones'
      | 'projects'
      | 'protectedRefs'
    >,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
  }

  private get versions(): MergeRequestVersions {
    return this.services.mergeRequestVersions;
  }

  /**
   * Opens a merge request from a branch of `view` (the source) into a branch of the target project: the
   * project itself, or another project of its fork network (`target_project_id`), chosen as GitLab's
   * BuildService does. It belongs to the target, which numbers it and holds its head ref.
   */
  async create(
    caller: Caller,
    view: ProjectView,
    params: CreateMergeRequestParams,
  ): Promise<MergeRequestDetailRecords> {
    this.services.mergeRequests.assertEnabled(view);
    const target = await this.targetOf(caller, view, params.target_project_id);
    const crossProject = target.project.id !== view.project.id;
    if (crossProject && !(await this.inForkNetwork(view.project.id, target.project.id)))
      throw new ApiError(422, { message: ['Source project is not a fork of the target project'] });
    if (!crossProject && params.source_branch === params.target_branch)
      throw new ApiError(422, { message: ["You can't use same project/branch for source and target"] });
    const sourceGit = this.services.repositories.open(view).git;
    const { git } = this.services.repositories.open(target);
    const [source, targetBranch] = await Promise.all([
      sourceGit.branch(params.source_branch),
      git.branch(params.target_branch),
    ]);
    const missing: Record<string, string[]> = {};
    if (!source) missing.source_branch = ['does not exist'];
    if (!targetBranch) missing.target_branch = ['does not exist'];
    if (!source || !targetBranch) throw validationFailed(missing);
    const pair = { sourceProjectId: view.project.id, targetProjectId: target.project.id };
    await this.refuseDuplicate(pair, params.source_branch, params.target_branch, null);
    const assigneeIds = await this.readers(target, assigneesOf(params) ?? []);
    const reviewerIds = await this.readers(target, params.reviewer_ids ?? []);
    const milestoneId = await this.usableMilestone(target, params.milestone_id);
    const allowCollaboration =
      (params.allow_collaboration ?? params.allow_maintainer_to_push ?? false) &&
      (await this.mayAllowCollaboration(caller, { ...pair, sourceBranch: params.source_branch }));
    // The target's repository gets the fork's commits before anything reads them there.
    if (crossProject) await git.fetchCommit(sourceGit.dir, source.sha);
    const version = await this.versions.compute(git, targetBranch.sha, source.sha);
    const people = { assigneeIds, reviewerIds, milestoneId, allowCollaboration };
    const id = await this.dataSource
      .transaction((tx) => this.insert(tx, caller, { source: view, target }, params, people, version))
      .catch(async (err: unknown) => {
        if (!isUniqueViolation(err)) throw err;
        await this.refuseDuplicate(pair, params.source_branch, params.target_branch, null);
        throw lostRace();
      });
    const created = await this.dataSource.getRepository(MergeRequest).findOneByOrFail({ id });
    await git.setMergeRequestRef(created.iid, source.sha);
    return this.services.mergeRequests.detail(caller, target, id);
  }

  /** The new merge request's rows, in the creation's transaction; its id. */
  private async insert(
    tx: EntityManager,
    caller: Caller,
    { source: view, target }: { source: ProjectView; target: ProjectView },
    params: CreateMergeRequestParams,
    people: {
      assigneeIds: number[];
      reviewerIds: number[];
      milestoneId: number | null | undefined;
      allowCollaboration: boolean;
    },
    version: Awaited<ReturnType<MergeRequestVersions['compute']>>,
  ): Promise<number> {
    const { assigneeIds, reviewerIds, milestoneId, allowCollaboration } = people;
    const iid = await nextInternalId(tx, target.project.id, 'merge_requests');
    const now = new Date();
    const { identifiers } = await tx.getRepository(MergeRequest).insert({
      iid,
      targetProjectId: target.project.id,
      sourceProjectId: view.project.id,
      sourceBranch: params.source_branch,
      targetBranch: params.target_branch,
      title: params.title,
      description: params.description ?? null,
      authorId: caller.user?.id ?? null,
      draft: isDraftTitle(params.title),
      squash: params.squash ?? false,
      shouldRemoveSourceBranch: params.remove_source_branch ?? null,
      forceRemoveSourceBranch: params.remove_source_branch ?? false,
      allowCollaboration,
      mergeAfter: params.merge_after ? storableDate('merge_after', params.merge_after) : null,
      milestoneId: milestoneId ?? null,
      preparedAt: now,
      createdAt: now,
      updatedAt: now,
    });
    const mergeRequestId = identifiers[0].id as number;
    await setUsers(tx, 'merge_request_assignees', mergeRequestId, assigneeIds);
    await setUsers(tx, 'merge_request_reviewers', mergeRequestId, reviewerIds);
    const labelNames = namesOf(params.labels);
    const labels = labelNames?.length
      ? await this.services.labels.findOrCreateForProject(target.project.id, labelNames, tx)
      : [];
    await this.setLabels(tx, mergeRequestId, labels);
    const origin = { mergeRequestId, userId: caller.user?.id ?? null, at: now };
    await recordLabelChanges(
      tx,
      origin,
      [],
      labels.map((label) => label.id),
    );
    await recordMilestoneChange(tx, origin, null, milestoneId ?? null);
    await this.versions.store(tx, mergeRequestId, version);
    const created = {
      id: mergeRequestId,
      targetProjectId: target.project.id,
      targetBranch: params.target_branch,
    };
    for (const hooks of this.services.mergeRequests.extensions.hooks) await hooks.created?.(tx, created);
    return mergeRequestId;
  }

  /**
   * GitLab's `find_target_project`: `target_project_id` when the caller may open merge requests there,
   * else the source's default target (its upstream, unless `mr_default_target_self` is set, the upstream
   * is more visible than the fork, or the caller may not open merge requests there), else the source.
   */
  private async targetOf(caller: Caller, source: ProjectView, targetId: number | undefined) {
    if (targetId === source.project.id) return source;
    if (targetId !== undefined) {
      const named = await this.visibleProject(caller, targetId);
      if (named && this.mayCreateIn(caller, named)) return named;
    }
    const upstreamId = source.project.forkedFromProjectId;
    if (upstreamId === null || projectSettings(source.project.settings).mr_default_target_self) return source;
    const upstream = await this.visibleProject(caller, upstreamId);
    if (
      upstream &&
      upstream.project.visibilityLevel <= source.project.visibilityLevel &&
      this.mayCreateIn(caller, upstream)
    )
      return upstream;
    return source;
  }

  private async visibleProject(caller: Caller, id: number): Promise<ProjectView | null> {
    try {
      return await this.services.projects.find(caller, id);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  }

  private mayCreateIn(caller: Caller, view: ProjectView): boolean {
    return (
      projectSettings(view.project.settings).merge_requests_enabled &&
      canProject(caller, 'create_merge_request_in', this.services.projects.subject(view))
    );
  }

  /** Both projects descend from the same root through their fork relations (GitLab's fork network). */
  private async inForkNetwork(a: number, b: number): Promise<boolean> {
    const [row] = (await this.dataSource.query(
      `WITH RECURSIVE up(start, id, parent, depth) AS (
         SELECT p.id, p.id, p.forked_from_project_id, 0 FROM projects p WHERE p.id = ANY($1::int[])
         UNION ALL
         SELECT up.start, p.id, p.forked_from_project_id, up.depth + 1 FROM up
         JOIN projects p ON p.id = up.parent WHERE up.depth < 100)
       SELECT count(DISTINCT id)::int AS roots FROM up WHERE parent IS NULL OR depth = 100`,
      [[a, b]],
    )) as Array<{ roots: number }>;
    return row.roots === 1;
  }

  /**
   * GitLab's `can_allow_collaboration?`: a merge request between two projects, both public or internal,
   * from a branch the fork does not protect, set by one who may push to the source project.
   */
  private async mayAllowCollaboration(
    caller: Caller,
    mr: { sourceProjectId: number | null; targetProjectId: number; sourceBranch: string },
  ): Promise<boolean> {
    if (mr.sourceProjectId === null || mr.sourceProjectId === mr.targetProjectId || !caller.user)
      return false;
    const rows = (await this.dataSource.query(
      'SELECT id, visibility_level, archived FROM projects WHERE id = ANY($1::int[])',
      [[mr.sourceProjectId, mr.targetProjectId]],
    )) as Array<{ id: number; visibility_level: number; archived: boolean }>;
    if (rows.length !== 2 || rows.some((row) => Number(row.visibility_level) <= Visibility.private))
      return false;
    const source = rows.find((row) => Number(row.id) === mr.sourceProjectId)!;
    const access = await projectAccess(this.dataSource.manager, caller, { id: mr.sourceProjectId });
    const subject = {
      visibilityLevel: Number(source.visibility_level),
      accessLevel: access.level,
      archived: source.archived,
    };
    if (!canProject(caller, 'push_code', subject)) return false;
    return !(await this.services.protectedRefs.isProtectedBranch(mr.sourceProjectId, mr.sourceBranch));
  }

  /** 409 with GitLab's message when another open merge request has the same pair of branches. */
  private async refuseDuplicate(
    pair: { sourceProjectId: number | null; targetProjectId: number },
    source: string,
    target: string,
    except: number | null,
  ) {
    const [row] = (await this.dataSource.query(
      `SELECT iid FROM merge_requests WHERE source_project_id = $1 AND target_project_id = $5
         AND source_branch = $2 AND target_branch = $3 AND state IN ('opened', 'locked')
         AND ($4::int IS NULL OR id <> $4) LIMIT 1`,
      [pair.sourceProjectId, source, target, except, pair.targetProjectId],
    )) as Array<{ iid: number }>;
    if (row)
      throw new ApiError(409, {
        message: [`Another open merge request already exists for this source branch: !${row.iid}`],
      });
  }

  /** Of the given users, those who may read the project's merge requests (others are left out, as GitLab does). */
  private async readers(view: ProjectView, ids: number[]): Promise<number[]> {
    const wanted = [...new Set(ids.filter((id) => id > 0))];
    if (wanted.length === 0) return [];
    const users = await this.dataSource.getRepository(User).findBy({ id: In(wanted) });
    const allowed: number[] = [];
    for (const user of users) {
      if (user.state !== 'active') continue;
      const caller: Caller = { user, token: null };
      const subject = await projectSubject(this.dataSource.manager, caller, view.project);
      if (canProject(caller, 'read_merge_request', subject)) allowed.push(user.id);
    }
    return allowed.sort((a, b) => a - b);
  }

  async update(
    caller: Caller,
    view: ProjectView,
    iid: number,
    params: UpdateMergeRequestParams,
  ): Promise<MergeRequestDetailRecords> {
    const mr = await this.services.mergeRequests.find(view, iid);
    if (!canUpdateMergeRequest(caller, view.accessLevel, mr.authorId)) throw forbidden();
    if (!UPDATE_KEYS.some((key) => params[key] !== undefined))
      throw badParameter(`${UPDATE_KEYS.join(', ')} are missing, at least one parameter must be provided`);
    const { git } = this.services.repositories.open(view);
    const targetBranch = params.target_branch ?? mr.targetBranch;
    if (targetBranch !== mr.targetBranch) {
      if (targetBranch === mr.sourceBranch && mr.sourceProjectId === mr.targetProjectId)
        throw new ApiError(422, { message: ["You can't use same project/branch for source and target"] });
      if (!(await git.branch(targetBranch))) throw validationFailed({ target_branch: ['does not exist'] });
    }
    let state = mr.state;
    if (params.state_event === 'close' && mr.state === 'opened') state = 'closed';
    // One whose fork is gone cannot be reopened (GitLab's `reopenable?`).
    if (params.state_event === 'reopen' && mr.state === 'closed' && mr.sourceProjectId !== null)
      state = 'opened';
    if (state === 'opened' && (state !== mr.state || targetBranch !== mr.targetBranch))
      await this.refuseDuplicate(mr, mr.sourceBranch, targetBranch, mr.id);
    const assignees = assigneesOf(params);
    const assigneeIds = assignees === undefined ? undefined : await this.readers(view, assignees);
    const reviewerIds =
      params.reviewer_ids === undefined ? undefined : await this.readers(view, params.reviewer_ids);
    const milestoneId = await this.usableMilestone(view, params.milestone_id);
    // A new target, or a reopened merge request whose source moved meanwhile, gets a new version.
    let version = null;
    const sourceId = mr.sourceProjectId;
    if (state === 'opened' && sourceId !== null && (targetBranch !== mr.targetBranch || state !== mr.state)) {
      const found = await this.versions.heads(
        await this.sourceGit(sourceId, view),
        git,
        mr.sourceBranch,
        targetBranch,
      );
      if (found) version = await this.versions.compute(git, found.start, found.head);
    }
    const wantsCollaboration = params.allow_collaboration ?? params.allow_maintainer_to_push;
    // Dropped, as GitLab filters it, unless the caller may allow it.
    const allowCollaboration =
      wantsCollaboration !== undefined && (await this.mayAllowCollaboration(caller, mr))
        ? wantsCollaboration
        : mr.allowCollaboration;
    const change: UpdateChange = {
      state,
      targetBranch,
      title: params.title ?? mr.title,
      assigneeIds,
      reviewerIds,
      milestoneId,
      allowCollaboration,
      version,
    };
    await this.dataSource
      .transaction((tx) => this.writeUpdate(tx, caller, view, mr, params, change))
      .catch(async (err: unknown) => {
        if (!isUniqueViolation(err)) throw err;
        await this.refuseDuplicate(mr, mr.sourceBranch, targetBranch, mr.id);
        throw lostRace();
      });
    if (version) await git.setMergeRequestRef(mr.iid, version.headCommitSha);
    return this.services.mergeRequests.detail(caller, view, mr.id);
  }

  /** The update's rows, events and system notes, in its transaction. */
  private async writeUpdate(
    tx: EntityManager,
    caller: Caller,
    view: ProjectView,
    mr: MergeRequest,
    params: UpdateMergeRequestParams,
    change: UpdateChange,
  ): Promise<void> {
    const { state, targetBranch, title, assigneeIds, reviewerIds, milestoneId, allowCollaboration, version } =
      change;
    const now = new Date();
    // The milestone before the change, read under the row lock, for its events.
    const [locked] = (await tx.query('SELECT milestone_id FROM merge_requests WHERE id = $1 FOR UPDATE', [
      mr.id,
    ])) as Array<{ milestone_id: number | null }>;
    await tx.getRepository(MergeRequest).update(mr.id, {
      title,
      draft: isDraftTitle(title),
      description: params.description ?? mr.description,
      targetBranch,
      state,
      ...(state !== mr.state && state === 'closed'
        ? { closedAt: now, closedById: caller.user?.id ?? null }
        : {}),
      ...(state !== mr.state && state === 'opened' ? { closedAt: null, closedById: null } : {}),
      squash: params.squash ?? mr.squash,
      shouldRemoveSourceBranch: params.remove_source_branch ?? mr.shouldRemoveSourceBranch,
      discussionLocked: params.discussion_locked ?? mr.discussionLocked,
      allowCollaboration,
      mergeAfter:
        params.merge_after === undefined
          ? mr.mergeAfter
          : params.merge_after === null
            ? null
            : storableDate('merge_after', params.merge_after),
      ...(milestoneId !== undefined ? { milestoneId } : {}),
      updatedAt: now,
    });
    const origin = { mergeRequestId: mr.id, userId: caller.user?.id ?? null, at: now };
    await this.changeLabels(tx, view, origin, params);
    if (milestoneId !== undefined)
      await recordMilestoneChange(tx, origin, locked?.milestone_id ?? null, milestoneId);
    if (state !== mr.state) await recordStateChange(tx, origin, state === 'closed' ? 'closed' : 'reopened');
    // The users before the change, read under the row lock, for the system notes.
    const people: MergeRequestChanged['changes'] = {};
    if (assigneeIds !== undefined) {
      people.assignees = moved(await usersOf(tx, 'merge_request_assignees', mr.id), assigneeIds);
      await setUsers(tx, 'merge_request_assignees', mr.id, assigneeIds, true);
    }
    if (reviewerIds !== undefined) {
      people.reviewers = moved(await usersOf(tx, 'merge_request_reviewers', mr.id), reviewerIds);
      await setUsers(tx, 'merge_request_reviewers', mr.id, reviewerIds, true);
    }
    if (version) await this.versions.store(tx, mr.id, version);
    const changes = {
      ...changesOf(mr, { state, title, description: params.description, params }),
      ...(people.assignees?.added.length || people.assignees?.removed.length
        ? { assignees: people.assignees }
        : {}),
      ...(people.reviewers?.added.length || people.reviewers?.removed.length
        ? { reviewers: people.reviewers }
        : {}),
    };
    if (Object.keys(changes).length > 0)
      await this.events.publish(tx, 'merge_request.changed', {
        mergeRequestId: mr.id,
        changeId: randomUUID(),
        actorId: caller.user?.id ?? null,
        at: now.toISOString(),
        changes,
      });
  }

  /** The repository of a merge request's source project (the target's own for one within a project). */
  private async sourceGit(sourceProjectId: number, target: ProjectView): Promise<GitRepository> {
    if (sourceProjectId === target.project.id) return this.services.repositories.open(target).git;
    const [row] = (await this.dataSource.query('SELECT repository_storage FROM projects WHERE id = $1', [
      sourceProjectId,
    ])) as Array<{ repository_storage: string }>;
    if (!row) throw recordNotFound();
    return this.services.repositories.gitOf({
      id: sourceProjectId,
      repositoryStorage: row.repository_storage,
    });
  }

  /**
   * The milestone id to store: undefined when not given, null for `0`, null or one the project cannot use
   * (GitLab drops a milestone that is not its project's or an ancestor group's).
   */
  private async usableMilestone(
    view: ProjectView,
    milestoneId: number | null | undefined,
  ): Promise<number | null | undefined> {
    if (milestoneId === undefined) return undefined;
    if (milestoneId === null || milestoneId === 0) return null;
    const milestone = await this.services.milestones.availableToProject(view.project.id, { id: milestoneId });
    return milestone?.id ?? null;
  }

  /** `labels` replaces, then `add_labels` adds and `remove_labels` removes, as GitLab combines them. */
  private async changeLabels(
    tx: EntityManager,
    view: ProjectView,
    origin: EventOrigin,
    params: UpdateMergeRequestParams,
  ): Promise<void> {
    const { mergeRequestId } = origin;
    const replace = namesOf(params.labels);
    const add = namesOf(params.add_labels);
    const remove = namesOf(params.remove_labels);
    if (replace === undefined && add === undefined && remove === undefined) return;
    const labels = this.services.labels;
    const rows = (await tx.query('SELECT label_id FROM merge_request_labels WHERE merge_request_id = $1', [
      mergeRequestId,
    ])) as Array<{ label_id: number }>;
    const before = rows.map((row) => Number(row.label_id));
    let ids = new Set(before);
    if (replace !== undefined)
      ids = new Set((await labels.findOrCreateForProject(view.project.id, replace, tx)).map((l) => l.id));
    if (add?.length)
      for (const label of await labels.findOrCreateForProject(view.project.id, add, tx)) ids.add(label.id);
    if (remove?.length)
      for (const label of await labels.availableToProject(view.project.id, remove, tx)) ids.delete(label.id);
    await tx.query('DELETE FROM merge_request_labels WHERE merge_request_id = $1', [mergeRequestId]);
    await this.setLabels(
      tx,
      mergeRequestId,
      [...ids].map((id) => ({ id })),
    );
    await recordLabelChanges(tx, origin, before, ids);
  }

  private async setLabels(tx: EntityManager, mergeRequestId: number, labels: Array<{ id: number }>) {
    if (labels.length === 0) return;
    await tx.query(
      `INSERT INTO merge_request_labels (merge_request_id, label_id) SELECT $1, unnest($2::int[])
       ON CONFLICT DO NOTHING`,
      [mergeRequestId, labels.map((label) => label.id)],
    );
  }

  async remove(view: ProjectView, iid: number): Promise<void> {
    const mr = await this.services.mergeRequests.find(view, iid);
    await this.dataSource.getRepository(MergeRequest).delete(mr.id);
    await this.services.repositories.open(view).git.setMergeRequestRef(mr.iid, null);
  }
}

/** The merge request that held the pair of branches was closed between the insert and the look-up. */
const lostRace = () =>
  new ApiError(409, { message: ['Another open merge request already exists for this source branch'] });

/** What an update changes that a system note records. */
function changesOf(
  mr: MergeRequest,
  next: {
    state: MergeRequest['state'];
    title: string;
    description: string | null | undefined;
    params: UpdateMergeRequestParams;
  },
): MergeRequestChanged['changes'] {
  const changes: MergeRequestChanged['changes'] = {};
  if (next.state !== mr.state) changes.state = next.state === 'closed' ? 'closed' : 'reopened';
  if (next.title !== mr.title) {
    const draft = isDraftTitle(next.title);
    if (draft !== mr.draft) changes.draft = draft;
    if (stripDraft(next.title) !== stripDraft(mr.title)) changes.title = { from: mr.title, to: next.title };
  }
  if (next.description !== undefined && next.description !== mr.description) changes.description = true;
  const locked = next.params.discussion_locked;
  if (locked !== undefined && locked !== (mr.discussionLocked ?? false)) changes.discussionLocked = locked;
  const after = next.params.merge_after;
  if (after !== undefined && (after ? Date.parse(after) : null) !== (mr.mergeAfter?.getTime() ?? null))
    changes.mergeAfter = true;
  return changes;
}

async function usersOf(tx: EntityManager, table: string, mergeRequestId: number): Promise<number[]> {
  const rows = (await tx.query(`SELECT user_id FROM ${table} WHERE merge_request_id = $1`, [
    mergeRequestId,
  ])) as Array<{ user_id: number }>;
  return rows.map((row) => row.user_id);
}

/** Who a change of a user list adds and removes. */
const moved = (before: number[], after: number[]) => ({
  added: after.filter((id) => !before.includes(id)),
  removed: before.filter((id) => !after.includes(id)),
});

async function setUsers(
  tx: EntityManager,
  table: string,
  mergeRequestId: number,
  userIds: number[],
  replace = false,
) {
  if (replace) await tx.query(`DELETE FROM ${table} WHERE merge_request_id = $1`, [mergeRequestId]);
  if (userIds.length > 0)
    await tx.query(
      `INSERT INTO ${table} (merge_request_id, user_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING`,
      [mergeRequestId, userIds],
    );
}
