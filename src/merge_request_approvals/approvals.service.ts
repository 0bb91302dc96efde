import { createHash } from 'node:crypto';
import { In, type DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import type { Subject } from '../core/abilities.js';
import { canApproveMergeRequests, canResetApprovals } from './abilities.js';
import type { Caller } from '../core/auth.js';
import {
  badParameter,
  conflict,
  forbidden,
  recordNotFound,
  unauthorized,
  validationFailed,
} from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { offsetHeaders, perPageOf, type RequestInfo } from '../core/pagination.js';
import { isUniqueViolation } from '../db/errors.js';
import { refPatternMatches, ZERO_SHA } from '../git/ref-changes.js';
import type { RefsUpdated } from '../repository/repositories.events.js';
import type { MergeRequest } from '../merge_requests/merge-request.entity.js';
import type {
  ListMergeRequestsParams,
  MergeRequestApprovalHooks,
} from '../merge_requests/merge-requests.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import { verifyPassword } from '../users/passwords.js';
import { User } from '../users/user.entity.js';
import {
  evaluate,
  type ApprovalRow,
  type ApprovalRuleRow,
  type GroupMembers,
  type MergeRequestState,
} from './approval-state.js';
import { patternMatcher } from './codeowners.js';

type Schemas = components['schemas'];
export type RuleCreate = Schemas['ApprovalRuleCreate'];
export type RuleUpdate = Schemas['ApprovalRuleUpdate'];
export type SettingsUpdate = Schemas['ProjectApprovalSettingsUpdate'];
type PageParams = { page?: number; per_page?: number };

export interface ApprovalSettings {
  approvals_before_merge: number;
  reset_approvals_on_push: boolean;
  selective_code_owner_removals: boolean;
  disable_overriding_approvers_per_merge_request: boolean;
  merge_requests_author_approval: boolean;
  merge_requests_disable_committers_approval: boolean;
  require_reauthentication_to_approve: boolean;
}

export const DEFAULT_SETTINGS: ApprovalSettings = {
  approvals_before_merge: 0,
  reset_approvals_on_push: true,
  selective_code_owner_removals: false,
  disable_overriding_approvers_per_merge_request: false,
  merge_requests_author_approval: false,
  merge_requests_disable_committers_approval: false,
  require_reauthentication_to_approve: false,
};

const SETTING_KEYS = Object.keys(DEFAULT_SETTINGS) as Array<keyof ApprovalSettings>;

export interface GroupRow {
  id: number;
  name: string;
  path: string;
  full_path: string;
  full_name: string;
}

export interface ProtectedBranchRow {
  id: number;
  name: string;
  code_owner_approval_required: boolean;
}

/** Rules with everything their presentation reads. */
export interface RuleRecords {
  rules: ApprovalRuleRow[];
  users: Map<number, User>;
  groups: Map<number, GroupRow>;
  groupMembers: GroupMembers;
  protectedBranches: Map<number, ProtectedBranchRow>;
  /** `approvals_required` of the project rules that merge request rules were copied from. */
  sourceRequired: Map<number, number>;
  /** On a merge request: the state of each rule. */
  state?: MergeRequestState;
  overridden?: boolean;
}

/** A merge request's approval state, with its users, as the approvals endpoints present it. */
export interface ApprovalRecords extends RuleRecords {
  mergeRequest: MergeRequest;
  state: MergeRequestState;
  settings: ApprovalSettings;
  userHasApproved: boolean;
  userCanApprove: boolean;
  overridden: boolean;
}

const RULE_COLUMNS = `id, project_id, merge_request_id, source_rule_id, name, rule_type, report_type, section,
  approvals_required, applies_to_all_protected_branches, user_ids, group_ids, protected_branch_ids, created_at`;

const subjectOf = (view: ProjectView): Subject => ({
  visibilityLevel: view.project.visibilityLevel,
  accessLevel: view.accessLevel,
  archived: view.project.archived,
  // A custom role's `admin_merge_request` grants `approve_merge_request` (MEMBER_ROLE_GRANTS).
  memberRolePermissions: view.memberRolePermissions,
});

const ids = (values: Array<number | null | undefined>) => [
  ...new Set(values.filter((value): value is number => typeof value === 'number')),
];

/** GitLab's mention list: `@a`, `@a and @b`, `@a, @b, and @c`. */
export function toSentence(items: string[]): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

export class MergeRequestApprovalsService implements MergeRequestApprovalHooks {
  private readonly dataSource: DataSource;
  private readonly events: Events;
  /** Approvals exist on this tier (Premium and Ultimate). */
  readonly enabled: boolean;
  private readonly approvedFilter: boolean;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<
      ServiceRegistry,
      'mergeRequests' | 'mergeRequestVersions' | 'repositories' | 'codeOwners'
    >,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
    // A Free instance has no approvals: nothing holds a merge back and no rule is copied.
    this.enabled = deps.config.tier !== 'free';
    this.approvedFilter = deps.config.features.has('mr_approved_filter');
    services.mergeRequests.useApprovals(this);
  }

  // ---- settings ----

  async settings(
    projectId: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ApprovalSettings> {
    return (await this.settingsOf(manager, [projectId])).get(projectId)!;
  }

  async settingsOf(manager: EntityManager, projectIds: number[]): Promise<Map<number, ApprovalSettings>> {
    const rows = (
      projectIds.length
        ? await manager.query(`SELECT * FROM project_approval_settings WHERE project_id = ANY($1::int[])`, [
            projectIds,
          ])
        : []
    ) as Array<ApprovalSettings & { project_id: number }>;
    const found = new Map(rows.map((row) => [row.project_id, row]));
    return new Map(
      projectIds.map((id) => {
        const row = found.get(id);
        return [id, row ? pick(row) : { ...DEFAULT_SETTINGS }];
      }),
    );
  }

  async updateSettings(view: ProjectView, body: SettingsUpdate): Promise<ApprovalSettings> {
    const given = Object.entries(body).filter(([, value]) => value !== undefined);
    if (given.length === 0)
      throw badParameter(
        'approvals_before_merge, reset_approvals_on_push, selective_code_owner_removals, disable_overriding_approvers_per_merge_request, merge_requests_author_approval, merge_requests_disable_committers_approval, require_password_to_approve, require_reauthentication_to_approve are missing, at least one parameter must be provided',
      );
    return this.dataSource.transaction((tx) => this.writeSettings(tx, view.project.id, body));
  }

  /** Stores the settings given in `tx`, under the same rules whether they come from here or a project edit. */
  async writeSettings(tx: EntityManager, projectId: number, body: SettingsUpdate): Promise<ApprovalSettings> {
    await tx.query(
      `INSERT INTO project_approval_settings (project_id) VALUES ($1) ON CONFLICT (project_id) DO NOTHING`,
      [projectId],
    );
    await tx.query(`SELECT 1 FROM project_approval_settings WHERE project_id = $1 FOR UPDATE`, [projectId]);
    const next = { ...(await this.settings(projectId, tx)) };
    for (const key of SETTING_KEYS) if (body[key] !== undefined) (next[key] as unknown) = body[key];
    if (
      body.require_password_to_approve !== undefined &&
      body.require_reauthentication_to_approve === undefined
    )
      next.require_reauthentication_to_approve = body.require_password_to_approve;
    if (body.selective_code_owner_removals === true && next.reset_approvals_on_push)
      throw validationFailed({
        base: ['selective_code_owner_removals can only be enabled when reset_approvals_on_push is disabled'],
      });
    await tx.query(
      `UPDATE project_approval_settings SET ${SETTING_KEYS.map((key, i) => `${key} = $${i + 2}`).join(', ')}
       WHERE project_id = $1`,
      [projectId, ...SETTING_KEYS.map((key) => next[key])],
    );
    return next;
  }

  // ---- rules ----

  private async rulesWhere(
    manager: EntityManager,
    where: string,
    values: unknown[],
    tail = '',
  ): Promise<ApprovalRuleRow[]> {
    return (await manager.query(
      `SELECT ${RULE_COLUMNS} FROM approval_rules WHERE ${where} ORDER BY id ${tail}`,
      values,
    )) as ApprovalRuleRow[];
  }

  /** Users, groups, group members and protected branches of the rules, a query each. */
  private async ruleRecords(manager: EntityManager, rules: ApprovalRuleRow[]): Promise<RuleRecords> {
    const groupIds = ids(rules.flatMap((rule) => rule.group_ids));
    const groups = new Map<number, GroupRow>();
    const groupMembers: GroupMembers = new Map();
    if (groupIds.length > 0) {
      for (const row of (await manager.query(
        `SELECT id, name, path, full_path, full_name FROM namespaces WHERE id = ANY($1::int[]) AND kind = 'group'`,
        [groupIds],
      )) as GroupRow[])
        groups.set(row.id, row);
      for (const row of (await manager.query(
        `SELECT m.source_id AS group_id, m.user_id FROM members m JOIN users u ON u.id = m.user_id
         WHERE m.source_type = 'Namespace' AND m.source_id = ANY($1::int[]) AND u.state = 'active'
           AND m.access_level >= 10 ORDER BY m.user_id`,
        [groupIds],
      )) as Array<{ group_id: number; user_id: number }>)
        groupMembers.set(row.group_id, [...(groupMembers.get(row.group_id) ?? []), row.user_id]);
    }
    const userIds = ids([...rules.flatMap((rule) => rule.user_ids), ...[...groupMembers.values()].flat()]);
    const branchIds = ids(rules.flatMap((rule) => rule.protected_branch_ids));
    const protectedBranches = new Map<number, ProtectedBranchRow>();
    if (branchIds.length > 0)
      for (const row of (await manager.query(
        `SELECT id, name, code_owner_approval_required FROM protected_branches WHERE id = ANY($1::int[])`,
        [branchIds],
      )) as ProtectedBranchRow[])
        protectedBranches.set(row.id, row);
    const sourceIds = ids(rules.map((rule) => rule.source_rule_id));
    const sourceRequired = new Map<number, number>();
    if (sourceIds.length > 0)
      for (const row of (await manager.query(
        `SELECT id, approvals_required FROM approval_rules WHERE id = ANY($1::int[])`,
        [sourceIds],
      )) as Array<{ id: number; approvals_required: number }>)
        sourceRequired.set(row.id, row.approvals_required);
    const users = await this.users(manager, userIds);
    return { rules, users, groups, groupMembers, protectedBranches, sourceRequired };
  }

  private async users(manager: EntityManager, userIds: number[]): Promise<Map<number, User>> {
    const users = new Map<number, User>();
    if (userIds.length > 0)
      for (const user of await manager.getRepository(User).findBy({ id: In(userIds) }))
        users.set(user.id, user);
    return users;
  }

  async listProjectRules(view: ProjectView, params: PageParams, request: RequestInfo) {
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const manager = this.dataSource.manager;
    const rules = await this.rulesWhere(
      manager,
      `project_id = $1 AND merge_request_id IS NULL`,
      [view.project.id, perPage, (page - 1) * perPage],
      'LIMIT $2 OFFSET $3',
    );
    const [{ count }] = (await manager.query(
      `SELECT count(*)::int AS count FROM approval_rules WHERE project_id = $1 AND merge_request_id IS NULL`,
      [view.project.id],
    )) as Array<{ count: number }>;
    return {
      ...(await this.ruleRecords(manager, rules)),
      headers: offsetHeaders(count, page, perPage, request),
    };
  }

  private async projectRule(
    manager: EntityManager,
    view: ProjectView,
    ruleId: number,
  ): Promise<ApprovalRuleRow> {
    const [rule] = await this.rulesWhere(
      manager,
      `id = $1 AND project_id = $2 AND merge_request_id IS NULL`,
      [ruleId, view.project.id],
    );
    if (!rule) throw recordNotFound();
    return rule;
  }

  async getProjectRule(view: ProjectView, ruleId: number): Promise<RuleRecords> {
    return this.ruleRecords(this.dataSource.manager, [
      await this.projectRule(this.dataSource.manager, view, ruleId),
    ]);
  }

  /** Validated attributes of a rule: approvers resolved, scope checked against the project. */
  private async attributes(
    manager: EntityManager,
    view: ProjectView,
    body: RuleUpdate,
    existing: ApprovalRuleRow | null,
  ) {
    const ruleType = body.rule_type ?? existing?.rule_type ?? 'regular';
    const userIds = new Set(body.user_ids ?? (body.usernames ? [] : (existing?.user_ids ?? [])));
    if (body.usernames?.length) {
      const rows = (await manager.query(`SELECT id FROM users WHERE lower(username) = ANY($1::text[])`, [
        body.usernames.map((name) => name.toLowerCase()),
      ])) as Array<{ id: number }>;
      for (const row of rows) userIds.add(row.id);
    }
    // Unknown users and groups are dropped, as GitLab's rule services do.
    const knownUsers = userIds.size
      ? (
          (await manager.query(`SELECT id FROM users WHERE id = ANY($1::int[])`, [[...userIds]])) as Array<{
            id: number;
          }>
        ).map((row) => row.id)
      : [];
    const groupIds = body.group_ids ?? existing?.group_ids ?? [];
    const knownGroups = groupIds.length
      ? (
          (await manager.query(`SELECT id FROM namespaces WHERE id = ANY($1::int[]) AND kind = 'group'`, [
            groupIds,
          ])) as Array<{ id: number }>
        ).map((row) => row.id)
      : [];
    const allBranches =
      body.applies_to_all_protected_branches ?? existing?.applies_to_all_protected_branches ?? false;
    let branchIds = allBranches ? [] : (body.protected_branch_ids ?? existing?.protected_branch_ids ?? []);
    if (branchIds.length > 0) {
      const rows = (await manager.query(
        `SELECT id FROM protected_branches WHERE id = ANY($1::int[]) AND project_id = $2`,
        [branchIds, view.project.id],
      )) as Array<{ id: number }>;
      if (rows.length !== new Set(branchIds).size)
        throw validationFailed({ protected_branches: ['is invalid'] });
      branchIds = [...new Set(branchIds)];
    }
    const reportType =
      ruleType === 'report_approver' ? (body.report_type ?? existing?.report_type ?? null) : null;
    if (ruleType === 'report_approver' && !reportType)
      throw validationFailed({ report_type: ["can't be blank"] });
    return {
      name: body.name ?? existing!.name,
      rule_type: ruleType,
      report_type: reportType,
      approvals_required: body.approvals_required ?? existing?.approvals_required ?? 0,
      applies_to_all_protected_branches: allBranches,
      user_ids: ruleType === 'any_approver' ? [] : knownUsers.sort((a, b) => a - b),
      group_ids: ruleType === 'any_approver' ? [] : knownGroups.sort((a, b) => a - b),
      protected_branch_ids: branchIds,
    };
  }

  private async refuseSecondAnyApprover(
    manager: EntityManager,
    scope: { projectId: number; mergeRequestId: number | null },
    ruleType: string,
    exceptId: number | null,
  ) {
    if (ruleType !== 'any_approver') return;
    const [row] = (await manager.query(
      `SELECT id FROM approval_rules WHERE project_id = $1 AND merge_request_id IS NOT DISTINCT FROM $2
         AND rule_type = 'any_approver' AND id IS DISTINCT FROM $3`,
      [scope.projectId, scope.mergeRequestId, exceptId],
    )) as Array<{ id: number }>;
    if (row) throw validationFailed({ rule_type: ['any-approver for the merge request already exists'] });
  }

  private async insertRule(
    tx: EntityManager,
    scope: { projectId: number; mergeRequestId: number | null; sourceRuleId?: number | null },
    attrs: Awaited<ReturnType<MergeRequestApprovalsService['attributes']>> & { section?: string | null },
  ): Promise<number> {
    const [row] = (await tx.query(
      `INSERT INTO approval_rules (project_id, merge_request_id, source_rule_id, name, rule_type, report_type,
         section, approvals_required, applies_to_all_protected_branches, user_ids, group_ids, protected_branch_ids)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::int[], $11::int[], $12::int[]) RETURNING id`,
      [
        scope.projectId,
        scope.mergeRequestId,
        scope.sourceRuleId ?? null,
        attrs.name,
        attrs.rule_type,
        attrs.report_type,
        attrs.section ?? null,
        attrs.approvals_required,
        attrs.applies_to_all_protected_branches,
        attrs.user_ids,
        attrs.group_ids,
        attrs.protected_branch_ids,
      ],
    )) as Array<{ id: number }>;
    return row.id;
  }

  private async updateRule(
    tx: EntityManager,
    id: number,
    attrs: Awaited<ReturnType<MergeRequestApprovalsService['attributes']>>,
    where = 'id = $1',
    extra: unknown[] = [],
  ) {
    await tx.query(
      `UPDATE approval_rules SET name = $2, rule_type = $3, report_type = $4, approvals_required = $5,
         applies_to_all_protected_branches = $6, user_ids = $7::int[], group_ids = $8::int[],
         protected_branch_ids = $9::int[], updated_at = now()
       WHERE ${where}`,
      [
        id,
        attrs.name,
        attrs.rule_type,
        attrs.report_type,
        attrs.approvals_required,
        attrs.applies_to_all_protected_branches,
        attrs.user_ids,
        attrs.group_ids,
        attrs.protected_branch_ids,
        ...extra,
      ],
    );
  }

  private nameTaken(err: unknown): never {
    if (isUniqueViolation(err)) throw validationFailed({ name: ['has already been taken'] });
    throw err;
  }

  /** Open merge requests that follow the project's rules (theirs were never edited), in project `$n`. */
  private followersSql = (n: number, columns = 'mr.id') => `SELECT ${columns} FROM merge_requests mr
    WHERE mr.target_project_id = $${n} AND mr.state = 'opened'
      AND NOT EXISTS (SELECT 1 FROM merge_request_approval_overrides o WHERE o.merge_request_id = mr.id)`;

  async createProjectRule(view: ProjectView, body: RuleCreate): Promise<RuleRecords> {
    const id = await this.dataSource
      .transaction(async (tx) => {
        const attrs = await this.attributes(tx, view, body, null);
        const scope = { projectId: view.project.id, mergeRequestId: null };
        await this.refuseSecondAnyApprover(tx, scope, attrs.rule_type, null);
        const ruleId = await this.insertRule(tx, scope, attrs);
        const rule = await this.projectRule(tx, view, ruleId);
        // Open merge requests get the new rule when it applies to their target branch.
        const followers = (await tx.query(this.followersSql(1, 'mr.id, mr.target_branch'), [
          view.project.id,
        ])) as Array<{
          id: number;
          target_branch: string;
        }>;
        for (const mr of followers)
          if (await this.appliesTo(tx, rule, view.project.id, mr.target_branch))
            await this.insertRule(
              tx,
              { projectId: view.project.id, mergeRequestId: mr.id, sourceRuleId: ruleId },
              attrs,
            );
        return ruleId;
      })
      .catch((err: unknown) => this.nameTaken(err));
    return this.getProjectRule(view, id);
  }

  async updateProjectRule(view: ProjectView, ruleId: number, body: RuleUpdate): Promise<RuleRecords> {
    await this.dataSource
      .transaction(async (tx) => {
        const existing = await this.projectRule(tx, view, ruleId);
        const attrs = await this.attributes(tx, view, body, existing);
        await this.refuseSecondAnyApprover(
          tx,
          { projectId: view.project.id, mergeRequestId: null },
          attrs.rule_type,
          ruleId,
        );
        await this.updateRule(tx, ruleId, attrs);
        await this.updateRule(
          tx,
          ruleId,
          attrs,
          `source_rule_id = $1 AND merge_request_id IN (${this.followersSql(10)})`,
          [view.project.id],
        );
      })
      .catch((err: unknown) => this.nameTaken(err));
    return this.getProjectRule(view, ruleId);
  }

  async deleteProjectRule(view: ProjectView, ruleId: number): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      await this.projectRule(tx, view, ruleId);
      await tx.query(
        `DELETE FROM approval_rules WHERE source_rule_id = $1 AND merge_request_id IN (${this.followersSql(2)})`,
        [ruleId, view.project.id],
      );
      await tx.query(`DELETE FROM approval_rules WHERE id = $1`, [ruleId]);
    });
  }

  /** Whether a project rule's branch scope takes in the branch (GitLab's `applies_to_branch?`). */
  private async appliesTo(
    manager: EntityManager,
    rule: ApprovalRuleRow,
    projectId: number,
    branch: string,
  ): Promise<boolean> {
    if (!rule.applies_to_all_protected_branches && rule.protected_branch_ids.length === 0) return true;
    const rows = (await manager.query(
      rule.applies_to_all_protected_branches
        ? `SELECT name FROM protected_branches WHERE project_id = $1`
        : `SELECT name FROM protected_branches WHERE project_id = $1 AND id = ANY($2::int[])`,
      rule.applies_to_all_protected_branches ? [projectId] : [projectId, rule.protected_branch_ids],
    )) as Array<{ name: string }>;
    return rows.some((row) => refPatternMatches(row.name, branch));
  }

  /** Copies the project's rules that apply to the target branch onto a new merge request (same transaction). */
  async created(
    tx: EntityManager,
    mr: { id: number; targetProjectId: number; targetBranch: string },
  ): Promise<void> {
    if (!this.enabled) return;
    const rules = await this.rulesWhere(tx, `project_id = $1 AND merge_request_id IS NULL`, [
      mr.targetProjectId,
    ]);
    for (const rule of rules)
      if (await this.appliesTo(tx, rule, mr.targetProjectId, mr.targetBranch))
        await this.insertRule(
          tx,
          { projectId: mr.targetProjectId, mergeRequestId: mr.id, sourceRuleId: rule.id },
          rule,
        );
  }

  // ---- merge request rules ----

  private async mergeRequestRules(manager: EntityManager, mergeRequestId: number) {
    return this.rulesWhere(manager, `merge_request_id = $1`, [mergeRequestId]);
  }

  async listMergeRequestRules(view: ProjectView, iid: number, params: PageParams, request: RequestInfo) {
    const mr = await this.services.mergeRequests.find(view, iid);
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const all = await this.mergeRequestRules(this.dataSource.manager, mr.id);
    const rules = all.slice((page - 1) * perPage, page * perPage);
    return {
      ...(await this.ruleRecords(this.dataSource.manager, rules)),
      headers: offsetHeaders(all.length, page, perPage, request),
    };
  }

  private async mergeRequestRule(manager: EntityManager, mr: MergeRequest, ruleId: number) {
    const [rule] = await this.rulesWhere(manager, `id = $1 AND merge_request_id = $2`, [ruleId, mr.id]);
    if (!rule) throw recordNotFound();
    return rule;
  }

  async getMergeRequestRule(view: ProjectView, iid: number, ruleId: number): Promise<RuleRecords> {
    const mr = await this.services.mergeRequests.find(view, iid);
    return this.ruleRecords(this.dataSource.manager, [
      await this.mergeRequestRule(this.dataSource.manager, mr, ruleId),
    ]);
  }

  /** Editing a merge request's rules: refused when the project forbids overriding; detaches it from the project's. */
  private async editable(view: ProjectView, iid: number): Promise<MergeRequest> {
    const mr = await this.services.mergeRequests.find(view, iid);
    if ((await this.settings(view.project.id)).disable_overriding_approvers_per_merge_request)
      throw forbidden();
    if (mr.state === 'merged') throw forbidden();
    return mr;
  }

  private async override(tx: EntityManager, mergeRequestId: number) {
    await tx.query(
      `INSERT INTO merge_request_approval_overrides (merge_request_id) VALUES ($1) ON CONFLICT DO NOTHING`,
      [mergeRequestId],
    );
  }

  async createMergeRequestRule(view: ProjectView, iid: number, body: RuleCreate): Promise<RuleRecords> {
    const mr = await this.editable(view, iid);
    const id = await this.dataSource
      .transaction(async (tx) => {
        const attrs = await this.attributes(tx, view, { ...body, protected_branch_ids: [] }, null);
        const scope = { projectId: view.project.id, mergeRequestId: mr.id };
        await this.refuseSecondAnyApprover(tx, scope, attrs.rule_type, null);
        await this.override(tx, mr.id);
        return this.insertRule(tx, scope, { ...attrs, applies_to_all_protected_branches: false });
      })
      .catch((err: unknown) => this.nameTaken(err));
    return this.getMergeRequestRule(view, iid, id);
  }

  async updateMergeRequestRule(view: ProjectView, iid: number, ruleId: number, body: RuleUpdate) {
    const mr = await this.editable(view, iid);
    await this.dataSource
      .transaction(async (tx) => {
        const existing = await this.mergeRequestRule(tx, mr, ruleId);
        if (existing.rule_type === 'code_owner') throw forbidden();
        const attrs = await this.attributes(tx, view, body, existing);
        await this.refuseSecondAnyApprover(
          tx,
          { projectId: view.project.id, mergeRequestId: mr.id },
          attrs.rule_type,
          ruleId,
        );
        await this.override(tx, mr.id);
        await this.updateRule(tx, ruleId, attrs);
      })
      .catch((err: unknown) => this.nameTaken(err));
    return this.getMergeRequestRule(view, iid, ruleId);
  }

  async deleteMergeRequestRule(view: ProjectView, iid: number, ruleId: number): Promise<void> {
    const mr = await this.editable(view, iid);
    await this.dataSource.transaction(async (tx) => {
      const existing = await this.mergeRequestRule(tx, mr, ruleId);
      if (existing.rule_type === 'code_owner') throw forbidden();
      await this.override(tx, mr.id);
      await tx.query(`DELETE FROM approval_rules WHERE id = $1`, [ruleId]);
    });
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

  /**
   * SQL: `[id, approvals left]` for each merge request `openIds` names (open ones), as a JSON array; the
   * lists and the single read select it beside the page, so a page's approval state costs no query.
   * `evaluate` in SQL: with rules, the sum over them of what each lacks (approvals from its users or its
   * groups' members, from anyone for an any-approver rule); without, `approvals_before_merge` approvals.
   * Null on a Free instance (nothing lacks approvals).
   */
  approvalsLeftSql(openIds: string): string | null {
    if (!this.enabled) return null;
    return `(SELECT json_agg(json_build_array(mr.id, (CASE
        WHEN EXISTS (SELECT 1 FROM approval_rules r WHERE r.merge_request_id = mr.id) THEN (
          SELECT sum(GREATEST(r.approvals_required - (
            SELECT count(*) FROM merge_request_approvals a WHERE a.merge_request_id = mr.id
              AND (r.rule_type = 'any_approver' OR a.user_id = ANY(r.user_ids)
                OR EXISTS (SELECT 1 FROM members m WHERE m.source_type = 'Namespace'
                  AND m.source_id = ANY(r.group_ids) AND m.access_level >= 10 AND m.user_id = a.user_id))), 0))
          FROM approval_rules r WHERE r.merge_request_id = mr.id)
        ELSE GREATEST(COALESCE((SELECT s.approvals_before_merge FROM project_approval_settings s
            WHERE s.project_id = mr.target_project_id), ${DEFAULT_SETTINGS.approvals_before_merge})
          - (SELECT count(*) FROM merge_request_approvals a WHERE a.merge_request_id = mr.id), 0)
        END)::int))
      FROM merge_requests mr WHERE mr.id = ANY(${openIds}))`;
  }

  async state(caller: Caller, view: ProjectView, iid: number): Promise<ApprovalRecords> {
    const mr = await this.services.mergeRequests.find(view, iid);
    return this.stateOf(caller, view, mr);
  }

  private async stateOf(caller: Caller, view: ProjectView, mr: MergeRequest): Promise<ApprovalRecords> {
    const manager = this.dataSource.manager;
    const rules = await this.mergeRequestRules(manager, mr.id);
    const records = await this.ruleRecords(manager, rules);
    const approvals = await this.approvalsOf(manager, [mr.id]);
    const settings = await this.settings(view.project.id);
    const state = evaluate(rules, approvals, records.groupMembers, settings.approvals_before_merge);
    for (const [id, user] of await this.users(
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
    if (!this.enabled) return;
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
      const users = await this.users(tx, userIds);
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
    const rules = (await this.mergeRequestRules(this.dataSource.manager, mr.id)).filter(
      (rule) => rule.rule_type === 'code_owner',
    );
    if (rules.length === 0) return owners;
    const paths = await this.services.codeOwners.changedPaths(
      mr.target_project_id,
      change.before,
      change.after,
    );
    const records = await this.ruleRecords(this.dataSource.manager, rules);
    for (const rule of rules) {
      const matcher = patternMatcher(rule.name);
      if (!paths.some((path) => matcher.test(`/${path}`))) continue;
      for (const id of rule.user_ids) owners.add(id);
      for (const groupId of rule.group_ids)
        for (const id of records.groupMembers.get(groupId) ?? []) owners.add(id);
    }
    return owners;
  }

  // ---- list filters ----

  /** `approved_by_ids`, `approved_by_usernames`, `approver_ids` and `approved` (flag `mr_approved_filter`). */
  applyListFilters(query: SelectQueryBuilder<MergeRequest>, params: ListMergeRequestsParams): void {
    if (!this.enabled) return;
    const approvedBy = params.approved_by_ids;
    const byAny = `EXISTS (SELECT 1 FROM merge_request_approvals a WHERE a.merge_request_id = mr.id)`;
    if (approvedBy !== undefined) {
      if (isNone(approvedBy)) query.andWhere(`NOT ${byAny}`);
      else if (isAny(approvedBy)) query.andWhere(byAny);
      else {
        const list = listOf(approvedBy);
        if (list.length > 5) throw badParameter('approved_by_ids must have at most 5 elements');
        query.andWhere(
          `(SELECT count(DISTINCT a.user_id) FROM merge_request_approvals a
            WHERE a.merge_request_id = mr.id AND a.user_id = ANY(:approvedByIds::int[])) = :approvedByCount`,
          { approvedByIds: list, approvedByCount: new Set(list).size },
        );
      }
    }
    const usernames = params.approved_by_usernames;
    if (usernames !== undefined) {
      if (isNone(usernames)) query.andWhere(`NOT ${byAny}`);
      else if (isAny(usernames)) query.andWhere(byAny);
      else {
        const names = [...new Set(listOf(usernames).map((name) => String(name).toLowerCase()))];
        if (names.length > 5) throw badParameter('approved_by_usernames must have at most 5 elements');
        query.andWhere(
          `(SELECT count(DISTINCT a.user_id) FROM merge_request_approvals a JOIN users au ON au.id = a.user_id
            WHERE a.merge_request_id = mr.id AND lower(au.username) = ANY(:approvedByNames::text[])) = :approvedByNameCount`,
          { approvedByNames: names, approvedByNameCount: names.length },
        );
      }
    }
    const approvers = params.approver_ids;
    const anyApprover = `EXISTS (SELECT 1 FROM approval_rules ar WHERE ar.merge_request_id = mr.id
      AND (cardinality(ar.user_ids) > 0 OR cardinality(ar.group_ids) > 0))`;
    if (approvers !== undefined) {
      if (isNone(approvers)) query.andWhere(`NOT ${anyApprover}`);
      else if (isAny(approvers)) query.andWhere(anyApprover);
      else
        for (const [i, userId] of listOf(approvers).entries())
          query.andWhere(
            `EXISTS (SELECT 1 FROM approval_rules ar WHERE ar.merge_request_id = mr.id
               AND (:approver${i}::int = ANY(ar.user_ids) OR EXISTS (SELECT 1 FROM members gm
                 WHERE gm.source_type = 'Namespace' AND gm.source_id = ANY(ar.group_ids) AND gm.user_id = :approver${i}::int)))`,
            { [`approver${i}`]: Number(userId) },
          );
    }
    if (params.approved !== undefined && this.approvedFilter) {
      // Approved: every rule has its approvals from its eligible approvers (or the fallback count).
      const approvedSql = `(CASE WHEN EXISTS (SELECT 1 FROM approval_rules r0 WHERE r0.merge_request_id = mr.id)
        THEN NOT EXISTS (SELECT 1 FROM approval_rules r WHERE r.merge_request_id = mr.id AND r.approvals_required > (
          SELECT count(*) FROM merge_request_approvals a WHERE a.merge_request_id = mr.id AND (r.rule_type = 'any_approver'
            OR a.user_id = ANY(r.user_ids) OR EXISTS (SELECT 1 FROM members gm WHERE gm.source_type = 'Namespace'
              AND gm.source_id = ANY(r.group_ids) AND gm.user_id = a.user_id))))
        ELSE (SELECT count(*) FROM merge_request_approvals a WHERE a.merge_request_id = mr.id) >=
          COALESCE((SELECT s.approvals_before_merge FROM project_approval_settings s
            WHERE s.project_id = mr.target_project_id), 0) END)`;
      query.andWhere(params.approved === 'yes' ? approvedSql : `NOT ${approvedSql}`);
    }
  }
}

const isNone = (value: unknown) => typeof value === 'string' && value.toLowerCase() === 'none';
const isAny = (value: unknown) => typeof value === 'string' && value.toLowerCase() === 'any';
const listOf = (value: unknown): Array<string | number> => (Array.isArray(value) ? value : [value as string]);

function pick(row: ApprovalSettings): ApprovalSettings {
  return Object.fromEntries(SETTING_KEYS.map((key) => [key, row[key]])) as unknown as ApprovalSettings;
}
