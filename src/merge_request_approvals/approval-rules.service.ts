/**
 * Approval rules: the project's, and each merge request's (copied from the project's at creation, or
 * its own once edited), with the users, groups and protected branches they name.
 */
import { In, type DataSource, type EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import { memberAtLeastSql } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import { forbidden, recordNotFound, validationFailed } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { offsetHeaders, perPageOf, type RequestInfo } from '../core/pagination.js';
import { isUniqueViolation } from '../db/errors.js';
import { refPatternMatches } from '../git/ref-changes.js';
import type { MergeRequest } from '../merge_requests/merge-request.entity.js';
import type { MergeRequestRef } from '../merge_requests/extension-points.js';
import type { ProjectView } from '../projects/projects.service.js';
import { User } from '../users/user.entity.js';
import type { ApprovalRuleRow, GroupMembers, MergeRequestState } from './approval-state.js';

type Schemas = components['schemas'];
export type RuleCreate = Schemas['ApprovalRuleCreate'];
export type RuleUpdate = Schemas['ApprovalRuleUpdate'];
type PageParams = { page?: number; per_page?: number };

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

const RULE_COLUMNS = `id, project_id, merge_request_id, source_rule_id, name, rule_type, report_type, section,
  approvals_required, applies_to_all_protected_branches, user_ids, group_ids, protected_branch_ids, created_at`;

const ids = (values: Array<number | null | undefined>) => [
  ...new Set(values.filter((value): value is number => typeof value === 'number')),
];

export class ApprovalRulesService {
  private readonly dataSource: DataSource;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'mergeRequests' | 'approvalSettings'>,
  ) {
    this.dataSource = deps.dataSource;
  }

  async rulesWhere(
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
  async ruleRecords(manager: EntityManager, rules: ApprovalRuleRow[]): Promise<RuleRecords> {
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
           AND ${memberAtLeastSql('m', AccessLevel.Guest)} ORDER BY m.user_id`,
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

  async users(manager: EntityManager, userIds: number[]): Promise<Map<number, User>> {
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
    attrs: Awaited<ReturnType<ApprovalRulesService['attributes']>> & { section?: string | null },
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
    attrs: Awaited<ReturnType<ApprovalRulesService['attributes']>>,
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
  async created(tx: EntityManager, mr: MergeRequestRef): Promise<void> {
    if (!this.services.approvalSettings.enabled) return;
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

  async mergeRequestRules(manager: EntityManager, mergeRequestId: number) {
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
    if (
      (await this.services.approvalSettings.settings(view.project.id))
        .disable_overriding_approvers_per_merge_request
    )
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
}
