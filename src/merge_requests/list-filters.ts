/** The merge request lists' filters, each as SQL on `mr`. */
import type { SelectQueryBuilder } from 'typeorm';
import { containing } from '../core/search.js';
import type { MergeRequest } from './merge-request.entity.js';
import {
  isAny,
  isNone,
  namesOf,
  storableDate,
  type ListMergeRequestsParams,
} from './merge-request-params.js';

/** SQL: the merge request has a row in `table` (assignees or reviewers) for the user `param` names. */
export const exists = (table: string, param: string) =>
  `EXISTS (SELECT 1 FROM ${table} j WHERE j.merge_request_id = mr.id AND j.user_id = ${param})`;
const existsAny = (table: string) => `EXISTS (SELECT 1 FROM ${table} j WHERE j.merge_request_id = mr.id)`;
const userByName = (param: string) => `(SELECT u.id FROM users u WHERE lower(u.username) = lower(${param}))`;

/** The seed's filters, each as SQL on `mr`. */
export function applyFilters(
  query: SelectQueryBuilder<MergeRequest>,
  params: ListMergeRequestsParams,
  labels: LabelUniverse | null,
): void {
  if (params.state && params.state !== 'all') query.andWhere('mr.state = :state', { state: params.state });
  if (params.iids?.length) query.andWhere('mr.iid IN (:...iids)', { iids: params.iids });
  applyPeopleFilters(query, params);
  applyTextAndTimeFilters(query, params);
  applyNotPeopleFilters(query, params.not ?? {});
  applyLabelFilters(query, params.labels, params.not?.labels, labels);
  applyMilestoneFilters(query, params.milestone, params.not?.milestone);
  // No deployments exist yet, so nothing was deployed anywhere.
  if (params.deployed_before || params.deployed_after || params.environment !== undefined)
    query.andWhere('false');
}

/** Author, assignee, reviewer and merger. */
function applyPeopleFilters(query: SelectQueryBuilder<MergeRequest>, params: ListMergeRequestsParams): void {
  if (params.author_id !== undefined)
    query.andWhere('mr.author_id = :authorId', { authorId: params.author_id });
  if (params.author_username !== undefined)
    query.andWhere(`mr.author_id = ${userByName(':authorName')}`, { authorName: params.author_username });
  const assignee = params.assignee_id;
  if (isNone(assignee)) query.andWhere(`NOT ${existsAny('merge_request_assignees')}`);
  else if (isAny(assignee)) query.andWhere(existsAny('merge_request_assignees'));
  else if (assignee !== undefined)
    query.andWhere(exists('merge_request_assignees', ':assigneeId'), { assigneeId: Number(assignee) });
  const reviewer = params.reviewer_id ?? params.reviewer_username;
  if (isNone(reviewer)) query.andWhere(`NOT ${existsAny('merge_request_reviewers')}`);
  else if (isAny(reviewer)) query.andWhere(existsAny('merge_request_reviewers'));
  else if (params.reviewer_id !== undefined)
    query.andWhere(exists('merge_request_reviewers', ':reviewerId'), {
      reviewerId: Number(params.reviewer_id),
    });
  else if (params.reviewer_username !== undefined)
    query.andWhere(exists('merge_request_reviewers', userByName(':reviewerName')), {
      reviewerName: params.reviewer_username,
    });
  if (params.merge_user_id !== undefined)
    query.andWhere('mr.merge_user_id = :mergeUserId', { mergeUserId: params.merge_user_id });
  if (params.merge_user_username !== undefined)
    query.andWhere(`mr.merge_user_id = ${userByName(':mergeUserName')}`, {
      mergeUserName: params.merge_user_username,
    });
}

/** Dates, branches, search and draft. */
function applyTextAndTimeFilters(
  query: SelectQueryBuilder<MergeRequest>,
  params: ListMergeRequestsParams,
): void {
  if (params.created_after)
    query.andWhere('mr.created_at >= :createdAfter', {
      createdAfter: storableDate('created_after', params.created_after),
    });
  if (params.created_before)
    query.andWhere('mr.created_at <= :createdBefore', {
      createdBefore: storableDate('created_before', params.created_before),
    });
  if (params.updated_after)
    query.andWhere('mr.updated_at >= :updatedAfter', {
      updatedAfter: storableDate('updated_after', params.updated_after),
    });
  if (params.updated_before)
    query.andWhere('mr.updated_at <= :updatedBefore', {
      updatedBefore: storableDate('updated_before', params.updated_before),
    });
  if (params.source_branch !== undefined)
    query.andWhere('mr.source_branch = :sourceBranch', { sourceBranch: params.source_branch });
  if (params.target_branch !== undefined)
    query.andWhere('mr.target_branch = :targetBranch', { targetBranch: params.target_branch });
  if (params.search) {
    const fields = (params.in ?? 'title,description').split(',');
    const clauses = fields.map((field) =>
      field === 'title' ? 'mr.title ILIKE :term' : 'mr.description ILIKE :term',
    );
    query.andWhere(`(${clauses.join(' OR ')})`, { term: containing(params.search) });
  }
  if (params.wip === 'yes') query.andWhere('mr.draft');
  if (params.wip === 'no') query.andWhere('NOT mr.draft');
}

/** `not[author_id]`, `not[assignee_id]`, `not[reviewer_id]` and their usernames. */
function applyNotPeopleFilters(
  query: SelectQueryBuilder<MergeRequest>,
  not: NonNullable<ListMergeRequestsParams['not']>,
): void {
  if (not.author_id !== undefined)
    query.andWhere('mr.author_id IS DISTINCT FROM :notAuthorId', { notAuthorId: not.author_id });
  if (not.author_username !== undefined)
    query.andWhere(`mr.author_id IS DISTINCT FROM ${userByName(':notAuthorName')}`, {
      notAuthorName: not.author_username,
    });
  if (not.assignee_id !== undefined)
    query.andWhere(`NOT ${exists('merge_request_assignees', ':notAssigneeId')}`, {
      notAssigneeId: not.assignee_id,
    });
  if (not.assignee_username !== undefined)
    query.andWhere(`NOT ${exists('merge_request_assignees', userByName(':notAssigneeName'))}`, {
      notAssigneeName: not.assignee_username,
    });
  if (not.reviewer_id !== undefined)
    query.andWhere(`NOT ${exists('merge_request_reviewers', ':notReviewerId')}`, {
      notReviewerId: not.reviewer_id,
    });
  if (not.reviewer_username !== undefined)
    query.andWhere(`NOT ${exists('merge_request_reviewers', userByName(':notReviewerName'))}`, {
      notReviewerName: not.reviewer_username,
    });
}

/** SQL: the caller's reactions on the merge request itself (not on its notes), optionally of one name. */
const myReaction = (nameParam?: string) =>
  `EXISTS (SELECT 1 FROM award_emoji a WHERE a.merge_request_id = mr.id AND a.note_id IS NULL
    AND a.user_id = :reactor${nameParam ? ` AND a.name = ${nameParam}` : ''})`;

/** `my_reaction_emoji` (a name, `None`, `Any`) and `not[my_reaction_emoji]`: ignored without a caller, as GitLab does. */
export function applyReactionFilters(
  query: SelectQueryBuilder<MergeRequest>,
  params: ListMergeRequestsParams,
  userId: number | undefined,
): void {
  if (userId === undefined) return;
  const emoji = params.my_reaction_emoji;
  if (isNone(emoji)) query.andWhere(`NOT ${myReaction()}`, { reactor: userId });
  else if (isAny(emoji)) query.andWhere(myReaction(), { reactor: userId });
  else if (emoji !== undefined) query.andWhere(myReaction(':reaction'), { reactor: userId, reaction: emoji });
  const notEmoji = params.not?.my_reaction_emoji;
  if (notEmoji !== undefined)
    query.andWhere(`NOT ${myReaction(':notReaction')}`, { reactor: userId, notReaction: notEmoji });
}

/**
 * The labels a label filter may name: in a project's list, the project's and its ancestor groups' (the
 * only ones its merge requests carry); elsewhere any.
 */
export interface LabelUniverse {
  projectId: number;
  groupIds: number[];
}

/**
 * `labels` (names, all required, any case; `None`, `Any`) and `not[labels]`, on the label ids each
 * merge request keeps (`label_ids`, in the lists' indexes). In a project the names are resolved to ids
 * once per statement; elsewhere, where a name may stand for many labels, each candidate's few ids are
 * looked up.
 */
function applyLabelFilters(
  query: SelectQueryBuilder<MergeRequest>,
  labels: string | undefined,
  notLabels: string | undefined,
  universe: LabelUniverse | null,
): void {
  if (isNone(labels)) query.andWhere(`mr.label_ids = '{}'`);
  else if (isAny(labels)) query.andWhere(`mr.label_ids <> '{}'`);
  const named = isNone(labels) || isAny(labels) ? [] : (namesOf(labels) ?? []);
  const excluded = namesOf(notLabels) ?? [];
  if (named.length === 0 && excluded.length === 0) return;
  if (universe) query.setParameters({ labelProject: universe.projectId, labelGroups: universe.groupIds });
  const carries = (param: string) =>
    universe
      ? `mr.label_ids && ARRAY(SELECT l.id FROM labels l WHERE lower(l.title) = ${param}
          AND (l.project_id = :labelProject OR l.group_id = ANY(:labelGroups::int[])))`
      : `EXISTS (SELECT 1 FROM labels l WHERE l.id = ANY(mr.label_ids) AND lower(l.title) = ${param})`;
  named.forEach((name, index) =>
    query.andWhere(carries(`:label${index}`), { [`label${index}`]: name.toLowerCase() }),
  );
  if (excluded.length > 0)
    query.andWhere(`NOT ${carries('ANY(:notLabels::text[])')}`, {
      notLabels: excluded.map((name) => name.toLowerCase()),
    });
}

/** Milestones that have started and are not past due; the next one due of each project or group. */
const STARTED = `SELECT m.id FROM milestones m WHERE m.state = 'active' AND m.start_date <= CURRENT_DATE
  AND (m.due_date IS NULL OR m.due_date >= CURRENT_DATE)`;
const UPCOMING = `SELECT m.id FROM milestones m WHERE m.state = 'active' AND m.due_date > CURRENT_DATE
  AND NOT EXISTS (SELECT 1 FROM milestones o WHERE o.state = 'active' AND o.due_date > CURRENT_DATE
    AND o.due_date < m.due_date AND o.project_id IS NOT DISTINCT FROM m.project_id
    AND o.group_id IS NOT DISTINCT FROM m.group_id)`;

function applyMilestoneFilters(
  query: SelectQueryBuilder<MergeRequest>,
  milestone: string | undefined,
  notMilestone: string | undefined,
): void {
  if (milestone !== undefined) {
    const keyword = milestone.toLowerCase();
    if (keyword === 'none') query.andWhere('mr.milestone_id IS NULL');
    else if (keyword === 'any') query.andWhere('mr.milestone_id IS NOT NULL');
    else if (keyword === 'started') query.andWhere(`mr.milestone_id IN (${STARTED})`);
    else if (keyword === 'upcoming') query.andWhere(`mr.milestone_id IN (${UPCOMING})`);
    else
      query.andWhere('mr.milestone_id IN (SELECT m.id FROM milestones m WHERE m.title = :milestoneTitle)', {
        milestoneTitle: milestone,
      });
  }
  if (notMilestone !== undefined)
    query.andWhere(
      `(mr.milestone_id IS NULL OR mr.milestone_id NOT IN
        (SELECT m.id FROM milestones m WHERE m.title = :notMilestoneTitle))`,
      { notMilestoneTitle: notMilestone },
    );
}
