import type { components } from '../../generated/openapi.js';
import { presentUserSummary } from '../users/user.presenter.js';
import type { ApprovalRuleRow, RuleState } from './approval-state.js';
import type { ApprovalSettings } from './approval-settings.service.js';
import type { RuleRecords } from './approval-rules.service.js';
import type { ApprovalRecords } from './approvals.service.js';

type Schemas = components['schemas'];
export type ApprovalRuleJson = Schemas['ApprovalRule'];
export type MergeRequestApprovalsJson = Schemas['MergeRequestApprovals'];
export type ApprovalStateJson = Schemas['MergeRequestApprovalState'];
export type ProjectApprovalSettingsJson = Schemas['ProjectApprovalSettings'];

export function presentApprovalSettings(settings: ApprovalSettings): ProjectApprovalSettingsJson {
  return {
    approvers: [],
    approver_groups: [],
    approvals_before_merge: settings.approvals_before_merge,
    reset_approvals_on_push: settings.reset_approvals_on_push,
    selective_code_owner_removals: settings.selective_code_owner_removals,
    disable_overriding_approvers_per_merge_request: settings.disable_overriding_approvers_per_merge_request,
    merge_requests_author_approval: settings.merge_requests_author_approval,
    merge_requests_disable_committers_approval: settings.merge_requests_disable_committers_approval,
    require_password_to_approve: settings.require_reauthentication_to_approve,
    require_reauthentication_to_approve: settings.require_reauthentication_to_approve,
  };
}

const usersOf = (userIds: number[], records: RuleRecords, externalUrl: string) =>
  userIds.flatMap((id) => {
    const user = records.users.get(id);
    return user ? [presentUserSummary(user, externalUrl)] : [];
  });

export function presentApprovalRule(
  rule: ApprovalRuleRow,
  records: RuleRecords,
  externalUrl: string,
  state?: RuleState,
): ApprovalRuleJson {
  const eligible = new Set(rule.user_ids);
  for (const groupId of rule.group_ids)
    for (const id of records.groupMembers.get(groupId) ?? []) eligible.add(id);
  return {
    id: rule.id,
    name: rule.name,
    rule_type: rule.rule_type,
    report_type: rule.report_type,
    ...(rule.merge_request_id !== null ? { section: rule.section } : {}),
    eligible_approvers: usersOf(
      [...eligible].sort((a, b) => a - b),
      records,
      externalUrl,
    ),
    approvals_required: rule.approvals_required,
    users: usersOf(rule.user_ids, records, externalUrl),
    groups: rule.group_ids.flatMap((id) => {
      const group = records.groups.get(id);
      return group
        ? [
            {
              id: group.id,
              name: group.name,
              path: group.path,
              full_path: group.full_path,
              full_name: group.full_name,
              web_url: `${externalUrl}/groups/${group.full_path}`,
              avatar_url: null,
            },
          ]
        : [];
    }),
    contains_hidden_groups: false,
    protected_branches: rule.protected_branch_ids.flatMap((id) => {
      const branch = records.protectedBranches.get(id);
      return branch
        ? [
            {
              id: branch.id,
              name: branch.name,
              code_owner_approval_required: branch.code_owner_approval_required,
            },
          ]
        : [];
    }),
    applies_to_all_protected_branches: rule.applies_to_all_protected_branches,
    ...(rule.merge_request_id !== null
      ? {
          overridden: records.overridden ?? false,
          source_rule:
            rule.source_rule_id !== null && records.sourceRequired.has(rule.source_rule_id)
              ? { approvals_required: records.sourceRequired.get(rule.source_rule_id)! }
              : null,
        }
      : {}),
    ...(state
      ? { approved: state.approved, approved_by: usersOf(state.approvedBy, records, externalUrl) }
      : {}),
  };
}

export function presentApprovals(records: ApprovalRecords, externalUrl: string): MergeRequestApprovalsJson {
  const mr = records.mergeRequest;
  const { state } = records;
  return {
    id: mr.id,
    iid: mr.iid,
    project_id: mr.targetProjectId,
    title: mr.title,
    description: mr.description,
    state: mr.state,
    created_at: mr.createdAt.toISOString(),
    updated_at: mr.updatedAt.toISOString(),
    merge_status: mr.mergeStatus,
    approved: state.approvalsLeft === 0,
    approvals_required: state.approvalsRequired,
    approvals_left: state.approvalsLeft,
    require_password_to_approve: records.settings.require_reauthentication_to_approve,
    approved_by: usersOf(state.approvedBy, records, externalUrl).map((user) => ({ user })),
    suggested_approvers: [],
    approvers: [],
    approver_groups: [],
    user_has_approved: records.userHasApproved,
    user_can_approve: records.userCanApprove,
    approval_rules_left: state.rules
      .filter((rule) => !rule.approved)
      .map((rule) => ({ id: rule.rule.id, name: rule.rule.name, rule_type: rule.rule.rule_type })),
    has_approval_rules: state.rules.length > 0,
    merge_request_approvers_available: true,
    multiple_approval_rules_available: true,
    invalid_approvers_rules: [],
  };
}

export function presentApprovalState(records: ApprovalRecords, externalUrl: string): ApprovalStateJson {
  return {
    approval_rules_overwritten: records.overridden,
    rules: records.state.rules.map((state) => presentApprovalRule(state.rule, records, externalUrl, state)),
  };
}
