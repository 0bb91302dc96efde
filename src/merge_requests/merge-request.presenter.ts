import type { components } from '../../generated/openapi.js';
import { presentCommit } from '../commits/commit.presenter.js';
import type { GitCommit } from '../git/repository.js';
import type { DiffResult } from '../git/diffs.js';
import { presentLabelBasic } from '../labels/label.presenter.js';
import { presentMilestone } from '../milestones/milestone.presenter.js';
import { presentDiff } from '../repository/compare.presenter.js';
import { presentUserSummary } from '../users/user.presenter.js';
import { humanDuration } from './durations.js';
import type { MergeRequest, MergeRequestDiff } from './merge-request.entity.js';
import { taskCompletion } from './merge-request-text.js';
import type {
  MergeRequestDetailRecords,
  MergeRequestProject,
  MergeRequestRecords,
} from './merge-request-records.js';

type Schemas = components['schemas'];
export type MergeRequestJson = Schemas['MergeRequest'];
export type MergeRequestSimpleJson = Schemas['MergeRequestSimple'];
export type MergeRequestDetailJson = Schemas['MergeRequestDetail'];
export type TimeStatsJson = Schemas['TimeStats'];
export type MergeRequestVersionJson = Schemas['MergeRequestVersion'];

/** Fields of the representation that another family fills (merge_request_approvals). */
type ContributedField = 'approvals_before_merge';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

const webUrl = (project: MergeRequestProject, mr: MergeRequest, externalUrl: string) =>
  `${externalUrl}/${project.fullPath}/-/merge_requests/${mr.iid}`;

export function presentTimeStats(mr: MergeRequest): TimeStatsJson {
  return {
    time_estimate: mr.timeEstimate,
    total_time_spent: mr.totalTimeSpent,
    human_time_estimate: humanDuration(mr.timeEstimate),
    human_total_time_spent: humanDuration(mr.totalTimeSpent),
  };
}

function squashOnMerge(mr: MergeRequest, project: MergeRequestProject): boolean {
  if (project.settings.squash_option === 'always') return true;
  if (project.settings.squash_option === 'never') return false;
  return mr.squash;
}

function milestoneOf(mr: MergeRequest, records: MergeRequestRecords, externalUrl: string) {
  const record = mr.milestoneId === null ? undefined : records.milestones.get(mr.milestoneId);
  return record ? presentMilestone(record, externalUrl) : null;
}

export function presentMergeRequestSimple(
  mr: MergeRequest,
  records: MergeRequestRecords,
  externalUrl: string,
): MergeRequestSimpleJson {
  return {
    id: mr.id,
    iid: mr.iid,
    project_id: mr.targetProjectId,
    title: mr.title,
    description: mr.description,
    state: mr.state,
    created_at: mr.createdAt.toISOString(),
    updated_at: mr.updatedAt.toISOString(),
    web_url: webUrl(records.projects.get(mr.targetProjectId)!, mr, externalUrl),
  };
}

export function presentMergeRequest(
  mr: MergeRequest,
  records: MergeRequestRecords,
  externalUrl: string,
): MergeRequestJson {
  const project = records.projects.get(mr.targetProjectId)!;
  const user = (id: number | null) => {
    const found = id === null ? undefined : records.users.get(id);
    return found ? presentUserSummary(found, externalUrl) : null;
  };
  const users = (ids: number[] | undefined) =>
    (ids ?? []).flatMap((id) => {
      const found = records.users.get(id);
      return found ? [presentUserSummary(found, externalUrl)] : [];
    });
  const assignees = users(records.assignees.get(mr.id));
  const reference = `!${mr.iid}`;
  const json: Omit<MergeRequestJson, ContributedField> = {
    id: mr.id,
    iid: mr.iid,
    project_id: mr.targetProjectId,
    title: mr.title,
    description: mr.description,
    state: mr.state,
    created_at: mr.createdAt.toISOString(),
    updated_at: mr.updatedAt.toISOString(),
    merged_by: mr.state === 'merged' ? user(mr.mergeUserId) : null,
    merge_user: user(mr.mergeUserId),
    merged_at: iso(mr.mergedAt),
    merge_after: iso(mr.mergeAfter),
    prepared_at: iso(mr.preparedAt),
    closed_by: user(mr.closedById),
    closed_at: iso(mr.closedAt),
    target_branch: mr.targetBranch,
    source_branch: mr.sourceBranch,
    user_notes_count: records.userNotesCounts.get(mr.id) ?? 0,
    upvotes: records.votes.get(mr.id)?.up ?? 0,
    downvotes: records.votes.get(mr.id)?.down ?? 0,
    author: user(mr.authorId),
    assignees,
    assignee: assignees[0] ?? null,
    reviewers: users(records.reviewers.get(mr.id)),
    source_project_id: mr.sourceProjectId,
    target_project_id: mr.targetProjectId,
    labels: (records.labels.get(mr.id) ?? []).map((label) =>
      records.withLabelsDetails ? presentLabelBasic(label) : label.title,
    ),
    draft: mr.draft,
    imported: false,
    imported_from: 'none',
    work_in_progress: mr.draft,
    milestone: milestoneOf(mr, records, externalUrl),
    merge_when_pipeline_succeeds: mr.autoMerge,
    merge_status: mr.mergeStatus,
    detailed_merge_status: records.extensions.detailedMergeStatus(mr, records),
    sha: mr.headSha,
    merge_commit_sha: mr.mergeCommitSha,
    squash_commit_sha: mr.squashCommitSha,
    discussion_locked: mr.discussionLocked,
    should_remove_source_branch: mr.shouldRemoveSourceBranch,
    force_remove_source_branch: mr.forceRemoveSourceBranch,
    // Only merge requests from forks say whether they allow collaboration, as GitLab's entity does.
    ...(records.collaboration.has(mr.id)
      ? {
          allow_collaboration: records.collaboration.get(mr.id)!,
          allow_maintainer_to_push: records.collaboration.get(mr.id)!,
        }
      : {}),
    reference,
    references: { short: reference, relative: reference, full: `${project.fullPath}${reference}` },
    web_url: webUrl(project, mr, externalUrl),
    time_stats: presentTimeStats(mr),
    squash: mr.squash,
    squash_on_merge: squashOnMerge(mr, project),
    task_completion_status: taskCompletion(mr.description),
    has_conflicts: mr.mergeStatus === 'cannot_be_merged',
    blocking_discussions_resolved: true,
  };
  // Other families' fields, last as GitLab's entities add them.
  return Object.assign(json, records.extensions.presentFields(mr, records)) as MergeRequestJson;
}

export function presentMergeRequestDetail(
  records: MergeRequestDetailRecords,
  externalUrl: string,
): MergeRequestDetailJson {
  const mr = records.items[0];
  const { diff, canMerge, firstContribution, divergedCommitsCount } = records.details;
  return {
    ...presentMergeRequest(mr, records, externalUrl),
    subscribed: false,
    changes_count: diff ? `${diff.realSize}${diff.state === 'overflow' ? '+' : ''}` : null,
    merge_error: mr.mergeError,
    diff_refs: diff
      ? { base_sha: diff.baseCommitSha, head_sha: diff.headCommitSha, start_sha: diff.startCommitSha }
      : null,
    user: { can_merge: canMerge },
    first_contribution: firstContribution,
    diverged_commits_count: divergedCommitsCount,
    rebase_in_progress: mr.rebaseInProgress,
  };
}

export function presentDiffs(
  result: Pick<DiffResult, 'diffs'> & { generated: Set<string> },
  unidiff: boolean,
) {
  return result.diffs.map((diff) =>
    presentDiff(diff, { unidiff, generated: result.generated.has(diff.newPath) }),
  );
}

export function presentVersion(version: MergeRequestDiff): MergeRequestVersionJson {
  return {
    id: version.id,
    head_commit_sha: version.headCommitSha,
    base_commit_sha: version.baseCommitSha,
    start_commit_sha: version.startCommitSha,
    created_at: version.createdAt.toISOString(),
    merge_request_id: version.mergeRequestId,
    state: version.state,
    real_size: String(version.realSize),
    patch_id_sha: version.patchIdSha,
  };
}

export const presentVersionCommits = (commits: GitCommit[], projectWebUrl: string) =>
  commits.map((commit) => presentCommit(commit, projectWebUrl));
