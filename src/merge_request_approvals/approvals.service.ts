/**
 * A merge request's approval state, approving and unapproving, resetting, and the approvals a push
 * removes. Settings and rules are services of their own; what approvals add to merge requests
 * (a merge check, fields, a hook, list filters) is in `merge-request-extensions.ts`.
 */
import { createHash } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { type Subject } from '../core/abilities.js';
import { canApproveMergeRequests, canResetApprovals } from './abilities.js';
import type { Caller } from '../core/auth.js';
import { conflict, recordNotFound, unauthorized } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { isUniqueViolation } from '../db/errors.js';
import { ZERO_SHA } from '../git/ref-changes.js';
import type { RefsUpdated } from '../repository/repositories.events.js';
import type { MergeRequest } from '../merge_requests/merge-request.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { verifyPassword } from '../users/passwords.js';
import type { User } from '../users/user.entity.js';
import type { ApprovalSettings } from './approval-settings.service.js';
import type { RuleRecords } from './approval-rules.service.js';
import { evaluate, type ApprovalRow, type MergeRequestState } from './approval-state.js';
import { patternMatcher } from './codeowners.js';

/** A merge request's approval state, with its users, as the approvals endpoints present it. */
export interface ApprovalRecords extends RuleRecords {
  mergeRequest: MergeRequest;
  state: MergeRequestState;
  settings: ApprovalSettings;
  userHasApproved: boolean;
  userCanApprove: boolean;
  overridden: boolean;
}

const subjectOf = (view: ProjectView): Subject => ({
  visibilityLevel: view.project.visibilityLevel,
  accessLevel: view.accessLevel,
  archived: view.project.archived,
  // A custom role's `admin_merge_request` grants `approve_merge_request` (MEMBER_ROLE_GRANTS).
  memberRolePermissions: view.memberRolePermissions,
});

/** GitLab's mention list: `@a`, `@a and @b`, `@a, @b, and @c`. */
export function toSentence(items: string[]): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

export class MergeRequestApprovalsService {
  private readonly dataSource: DataSource;
  private readonly events: Events;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<
      ServiceRegistry,
      | 'mergeRequests'
      | 'mergeRequestVersions'
      | 'repositories'
      | 'codeOwners'
      | 'approvalSettings'
      | 'approvalRules'
    >,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
  }

  private get rules() {
    return this.services.approvalRules;
  }

  private settings(projectId: number): Promise<ApprovalSettings> {
    return this.services.approvalSettings.settings(projectId);
  }

  // ---- approval state ----

  /** Approvals of the merge requests, oldest first. */
  private async approvalsOf(manager: EntityManager, mergeRequestIds: number[]): Promise<ApprovalRow[]> {
    if (mergeRequestIds.length === 0) return [];
    return (await manager.query(
      `SELECT merge_request_id, user_id, sha, created_at FROM merge_request_approvals
       WHERE merge_request_id = ANY($1::int[]) ORDER BY created_at, id`,
      [mergeRequestIds],
    )) as ApprovalRow[];
  }

  async state(caller: Caller, view: ProjectView, iid: number): Promise<ApprovalRecords> {
    const mr = await this.services.mergeRequests.find(view, iid);
    return this.stateOf(caller, view, mr);
  }

  private async stateOf(caller: Caller, view: ProjectView, mr: MergeRequest): Promise<ApprovalRecords> {
    const manager = this.dataSource.manager;
    const rules = await this.rules.mergeRequestRules(manager, mr.id);
    const records = await this.rules.ruleRecords(manager, rules);
    const approvals = await this.approvalsOf(manager, [mr.id]);
    const settings = await this.settings(view.project.id);
    const state = evaluate(rules, approvals, records.groupMembers, settings.approvals_before_merge);
    for (const [id, user] of await this.rules.users(
      manager,
      approvals.map((approval) => approval.user_id),
    ))
      records.users.set(id, user);
    const me = caller.user?.id;
    const userHasApproved = me !== undefined && state.approvedBy.includes(me);
    const userCanApprove = !userHasApproved && (await this.refusal(caller, view, mr, settings)) === null;
    const [override] = (await manager.query(
      `SELECT 1 FROM merge_request_approval_overrides WHERE merge_request_id = $1`,
      [mr.id],
    )) as unknown[];
    return {
      ...records,
      mergeRequest: mr,
      state,
      settings,
      userHasApproved,
      userCanApprove,
      overridden: override !== undefined,
    };
  }

  /** Why the caller may not approve (GitLab's `can_approve?`), or null. */
  private async refusal(
    caller: Caller,
    view: ProjectView,
    mr: MergeRequest,
    settings: ApprovalSettings,
  ): Promise<string | null> {
    const user = caller.user;
    if (!user) return 'anonymous';
    if (!canApproveMergeRequests(caller, subjectOf(view))) return 'ability';
    if (mr.state !== 'opened') return 'not open';
    if (mr.authorId === user.id && !settings.merge_requests_author_approval) return 'author';
    if (settings.merge_requests_disable_committers_approval && (await this.isCommitter(view, mr, user)))
      return 'committer';
    return null;
  }

  /** Whether one of the merge request's commits was committed with the user's e-mail. */
  private async isCommitter(view: ProjectView, mr: MergeRequest, user: User): Promise<boolean> {
    const diff = (await this.services.mergeRequestVersions.latest(this.dataSource.manager, [mr.id])).get(
      mr.id,
    );
    if (!diff) return false;
    const git = this.services.repositories.open(view).git;
    const range = diff.baseCommitSha ? `${diff.baseCommitSha}..${diff.headCommitSha}` : diff.headCommitSha;
    const commits = await git.log({ revisions: [range], maxCount: 1000 });
    const email = user.email.toLowerCase();
    return commits.some((commit) => commit.committerEmail.toLowerCase() === email);
  }

  // ---- approving ----

  async approve(
    caller: Caller,
    view: ProjectView,
    iid: number,
    body: { sha?: string; approval_password?: string },
  ): Promise<ApprovalRecords> {
    const mr = await this.services.mergeRequests.find(view, iid);
    if (body.sha !== undefined && body.sha !== mr.headSha)
      throw conflict(`SHA does not match HEAD of source branch: ${mr.headSha ?? ''}`);
    const settings = await this.settings(view.project.id);
    const user = caller.user!;
    if (settings.require_reauthentication_to_approve) {
      const [row] = (await this.dataSource.query(`SELECT password_digest FROM users WHERE id = $1`, [
        user.id,
      ])) as Array<{
        password_digest: string | null;
      }>;
      if (
        !body.approval_password ||
        !(await verifyPassword(body.approval_password, row?.password_digest ?? null))
      )
        throw unauthorized();
    }
    if ((await this.refusal(caller, view, mr, settings)) !== null) throw unauthorized();
    const now = new Date();
    await this.dataSource
      .transaction(async (tx) => {
        await tx.query(
          `INSERT INTO merge_request_approvals (merge_request_id, user_id, sha, created_at) VALUES ($1, $2, $3, $4)`,
          [mr.id, user.id, mr.headSha, now],
        );
        await this.systemNote(
          tx,
          mr,
          user.id,
          'approved this merge request',
          `approve:${mr.id}:${user.id}:${now.getTime()}`,
          now,
        );
        // An automatic merge waiting for approvals may go through now.
        if (mr.autoMerge)
          await this.events.publish(tx, 'merge_request.auto_merge_check', { mergeRequestId: mr.id });
      })
      .catch((err: unknown) => {
        if (isUniqueViolation(err)) throw unauthorized();
        throw err;
      });
    return this.stateOf(caller, view, mr);
  }

  async unapprove(caller: Caller, view: ProjectView, iid: number): Promise<ApprovalRecords> {
    const mr = await this.services.mergeRequests.find(view, iid);
    const user = caller.user!;
    const now = new Date();
    await this.dataSource.transaction(async (tx) => {
      const deleted = (await tx.query(
        `DELETE FROM merge_request_approvals WHERE merge_request_id = $1 AND user_id = $2 RETURNING id`,
        [mr.id, user.id],
      )) as [unknown[], number];
      if (deleted[0].length === 0) throw recordNotFound();
      await this.systemNote(
        tx,
        mr,
        user.id,
        'unapproved this merge request',
        `unapprove:${mr.id}:${user.id}:${now.getTime()}`,
        now,
      );
    });
    return this.stateOf(caller, view, mr);
  }

  /** `PUT …/reset_approvals`: bots of project or group access tokens that belong to the project only. */
  async reset(caller: Caller, view: ProjectView, iid: number): Promise<void> {
    const mr = await this.services.mergeRequests.find(view, iid);
    if (!canResetApprovals(caller, view.accessLevel) || mr.state === 'merged') throw unauthorized();
    await this.dataSource.query(`DELETE FROM merge_request_approvals WHERE merge_request_id = $1`, [mr.id]);
  }

  private async systemNote(
    tx: EntityManager,
    mr: MergeRequest,
    authorId: number | null,
    body: string,
    key: string,
    at: Date,
  ) {
    const discussionId = createHash('sha1').update(key).digest('hex');
    await tx.query(
      `INSERT INTO notes (project_id, noteable_type, noteable_id, author_id, body, system, discussion_id,
         created_at, updated_at)
       VALUES ($1, 'MergeRequest', $2, $3, $4, true, $5, $6, $6)
       ON CONFLICT (discussion_id) WHERE system DO NOTHING`,
      [mr.targetProjectId, mr.id, authorId, body, discussionId, at],
    );
  }

  // ---- after a push ----

  /**
   * A push of new commits to a source branch removes the approvals given before it (those of another head),
   * with `reset_approvals_on_push`; with `selective_code_owner_removals` only code owners' approvals whose
   * files the push changed. A system note names whose approvals went. Safe to repeat.
   */
  async afterPush(event: RefsUpdated): Promise<void> {
    if (!this.services.approvalSettings.enabled) return;
    const pushed = event.changes.filter(
      (change) =>
        change.ref.startsWith('refs/heads/') && change.before !== ZERO_SHA && change.after !== ZERO_SHA,
    );
    if (pushed.length === 0) return;
    for (const change of pushed) {
      const branch = change.ref.slice('refs/heads/'.length);
      const mrs = (await this.dataSource.query(
        `SELECT id, target_project_id, iid FROM merge_requests
         WHERE source_project_id = $1 AND source_branch = $2 AND state = 'opened'`,
        [event.projectId, branch],
      )) as Array<{ id: number; target_project_id: number; iid: number }>;
      for (const mr of mrs) await this.resetAfterPush(mr, change, event.userId);
    }
  }

  private async resetAfterPush(
    mr: { id: number; target_project_id: number },
    change: { before: string; after: string },
    pusherId: number | null,
  ): Promise<void> {
    const settings = await this.settings(mr.target_project_id);
    if (!settings.reset_approvals_on_push && !settings.selective_code_owner_removals) return;
    let only: Set<number> | null = null;
    if (!settings.reset_approvals_on_push) only = await this.codeOwnersOfChange(mr, change);
    await this.dataSource.transaction(async (tx) => {
      const removed = (await tx.query(
        `DELETE FROM merge_request_approvals WHERE merge_request_id = $1 AND sha IS DISTINCT FROM $2
           AND ($3::int[] IS NULL OR user_id = ANY($3::int[]))
         RETURNING user_id`,
        [mr.id, change.after, only ? [...only] : null],
      )) as [Array<{ user_id: number }>, number];
      const userIds = removed[0].map((row) => row.user_id);
      if (userIds.length === 0) return;
      const users = await this.rules.users(tx, userIds);
      const names = userIds.flatMap((id) => (users.has(id) ? [`@${users.get(id)!.username}`] : []));
      const body = `reset approvals from ${toSentence(names)} by pushing to the branch`;
      await this.systemNote(
        tx,
        { id: mr.id, targetProjectId: mr.target_project_id } as MergeRequest,
        pusherId,
        body,
        `reset:${mr.id}:${change.after}`,
        new Date(),
      );
    });
  }

  /** Eligible approvers of the merge request's code owner rules whose patterns match a file the push changed. */
  private async codeOwnersOfChange(
    mr: { id: number; target_project_id: number },
    change: { before: string; after: string },
  ): Promise<Set<number>> {
    const owners = new Set<number>();
    const rules = (await this.rules.mergeRequestRules(this.dataSource.manager, mr.id)).filter(
      (rule) => rule.rule_type === 'code_owner',
    );
    if (rules.length === 0) return owners;
    const paths = await this.services.codeOwners.changedPaths(
      mr.target_project_id,
      change.before,
      change.after,
    );
    const records = await this.rules.ruleRecords(this.dataSource.manager, rules);
    for (const rule of rules) {
      const matcher = patternMatcher(rule.name);
      if (!paths.some((path) => matcher.test(`/${path}`))) continue;
      for (const id of rule.user_ids) owners.add(id);
      for (const groupId of rule.group_ids)
        for (const id of records.groupMembers.get(groupId) ?? []) owners.add(id);
    }
    return owners;
  }
}
