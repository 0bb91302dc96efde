/** How far a merge request's approvals go towards its rules: pure, so lists evaluate a page at once. */

export type RuleType = 'any_approver' | 'regular' | 'report_approver' | 'code_owner';

export interface ApprovalRuleRow {
  id: number;
  project_id: number;
  merge_request_id: number | null;
  source_rule_id: number | null;
  name: string;
  rule_type: RuleType;
  report_type: string | null;
  section: string | null;
  approvals_required: number;
  applies_to_all_protected_branches: boolean;
  user_ids: number[];
  group_ids: number[];
  protected_branch_ids: number[];
  created_at: Date;
}

export interface ApprovalRow {
  merge_request_id: number;
  user_id: number;
  sha: string | null;
  created_at: Date;
}

export interface RuleState {
  rule: ApprovalRuleRow;
  /** The rule's users and the members of its groups. */
  eligible: number[];
  /** Who of the eligible approved (everyone who approved, for an any-approver rule). */
  approvedBy: number[];
  left: number;
  approved: boolean;
}

export interface MergeRequestState {
  rules: RuleState[];
  approvalsRequired: number;
  approvalsLeft: number;
  approvedBy: number[];
}

/** Members of each group, as the rules' eligible approvers need them. */
export type GroupMembers = Map<number, number[]>;

export function eligibleOf(rule: ApprovalRuleRow, groupMembers: GroupMembers): number[] {
  const ids = new Set(rule.user_ids);
  for (const groupId of rule.group_ids) for (const id of groupMembers.get(groupId) ?? []) ids.add(id);
  return [...ids].sort((a, b) => a - b);
}

/**
 * GitLab's approval state: each rule needs its `approvals_required` from its eligible approvers (any
 * approver for an any-approver rule); the merge request needs the sum of what each still lacks. With no
 * rule, the project's `approvals_before_merge` approvals from anyone.
 */
export function evaluate(
  rules: ApprovalRuleRow[],
  approvals: ApprovalRow[],
  groupMembers: GroupMembers,
  fallbackRequired: number,
): MergeRequestState {
  const approvedBy = approvals.map((approval) => approval.user_id);
  const approvers = new Set(approvedBy);
  if (rules.length === 0) {
    const left = Math.max(fallbackRequired - approvedBy.length, 0);
    return { rules: [], approvalsRequired: fallbackRequired, approvalsLeft: left, approvedBy };
  }
  const states = rules.map((rule) => {
    const eligible = eligibleOf(rule, groupMembers);
    const counted =
      rule.rule_type === 'any_approver' ? approvedBy : eligible.filter((id) => approvers.has(id));
    const left = Math.max(rule.approvals_required - counted.length, 0);
    return { rule, eligible, approvedBy: counted, left, approved: left === 0 };
  });
  return {
    rules: states,
    approvalsRequired: states.reduce((sum, state) => sum + state.rule.approvals_required, 0),
    approvalsLeft: states.reduce((sum, state) => sum + state.left, 0),
    approvedBy,
  };
}
