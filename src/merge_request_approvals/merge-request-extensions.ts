/**
 * What approvals add to merge requests, through the merge requests family's extension points: the
 * `not_approved` merge check, `approvals_before_merge`, the rules copied at creation, and the list
 * filters on approvals.
 */
import type { SelectQueryBuilder } from 'typeorm';
import { memberAtLeastSql } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import { badParameter } from '../core/errors.js';
import type {
  MergeCheck,
  MergeRequestFields,
  MergeRequestListFilter,
} from '../merge_requests/extension-points.js';
import type { MergeRequest } from '../merge_requests/merge-request.entity.js';
import { isAny, isNone, type ListMergeRequestsParams } from '../merge_requests/merge-request-params.js';
import { DEFAULT_SETTINGS, type ApprovalSettingsService } from './approval-settings.service.js';

/**
 * SQL: `[id, approvals left]` for each merge request `openIds` names (open ones), as a JSON array; the
 * lists and the single read select it beside the page, so a page's approval state costs no query.
 * `evaluate` in SQL: with rules, the sum over them of what each lacks (approvals from its users or its
 * groups' members, from anyone for an any-approver rule); without, `approvals_before_merge` approvals.
 */
const approvalsLeftSql = (openIds: string) => `(SELECT json_agg(json_build_array(mr.id, (CASE
        WHEN EXISTS (SELECT 1 FROM approval_rules r WHERE r.merge_request_id = mr.id) THEN (
          SELECT sum(GREATEST(r.approvals_required - (
            SELECT count(*) FROM merge_request_approvals a WHERE a.merge_request_id = mr.id
              AND (r.rule_type = 'any_approver' OR a.user_id = ANY(r.user_ids)
                OR EXISTS (SELECT 1 FROM members m WHERE m.source_type = 'Namespace'
                  AND m.source_id = ANY(r.group_ids) AND ${memberAtLeastSql('m', AccessLevel.Guest)} AND m.user_id = a.user_id))), 0))
          FROM approval_rules r WHERE r.merge_request_id = mr.id)
        ELSE GREATEST(COALESCE((SELECT s.approvals_before_merge FROM project_approval_settings s
            WHERE s.project_id = mr.target_project_id), ${DEFAULT_SETTINGS.approvals_before_merge})
          - (SELECT count(*) FROM merge_request_approvals a WHERE a.merge_request_id = mr.id), 0)
        END)::int))
      FROM merge_requests mr WHERE mr.id = ANY(${openIds}))`;

/** GitLab's `not_approved`: an approval rule still lacks approvals (read live). Inactive on a Free instance. */
export const notApprovedCheck = (settings: ApprovalSettingsService): MergeCheck => ({
  name: 'not_approved',
  message: 'All required approvals must be given',
  precedence: 50,
  reported: true,
  blocksMerge: true,
  data: ({ open }) => (settings.enabled ? approvalsLeftSql(open) : null),
  status: ({ data }) => (settings.enabled ? (Number(data ?? 0) > 0 ? 'failed' : 'success') : 'inactive'),
});

/** GitLab's deprecated `approvals_before_merge` of a merge request: forge-api keeps none per merge request. */
export const approvalFields: MergeRequestFields = {
  present: () => ({ approvals_before_merge: null }),
};

export const approvalListFilter = (settings: ApprovalSettingsService): MergeRequestListFilter => ({
  apply: (query, params) => {
    if (settings.enabled) applyListFilters(query, params, settings.approvedFilter);
  },
});

/** `approved_by_ids`, `approved_by_usernames`, `approver_ids` and `approved` (flag `mr_approved_filter`). */
function applyListFilters(
  query: SelectQueryBuilder<MergeRequest>,
  params: ListMergeRequestsParams,
  approvedFilter: boolean,
): void {
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
  if (params.approved !== undefined && approvedFilter) {
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

const listOf = (value: unknown): Array<string | number> => (Array.isArray(value) ? value : [value as string]);
