import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type MergeRequestState = 'opened' | 'closed' | 'locked' | 'merged';
export type MergeStatus = 'unchecked' | 'checking' | 'can_be_merged' | 'cannot_be_merged';

/** The merge an automatic merge will make, as `PUT …/merge` asked for it. */
export interface AutoMergeParams {
  sha: string;
  merge_commit_message?: string;
  squash_commit_message?: string;
  squash?: boolean;
  should_remove_source_branch?: boolean;
}

/** A request to merge a source branch into a target branch; assignees and reviewers are join tables. */
@Entity({ name: 'merge_requests' })
export class MergeRequest {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer' })
  iid: number;

  @Column({ type: 'integer', name: 'target_project_id' })
  targetProjectId: number;

  /** Null once the fork it came from is deleted (the merge request stays, closed, in its target). */
  @Column({ type: 'integer', name: 'source_project_id', nullable: true })
  sourceProjectId: number | null;

  @Column({ type: 'varchar', length: 255, name: 'source_branch' })
  sourceBranch: string;

  @Column({ type: 'varchar', length: 255, name: 'target_branch' })
  targetBranch: string;

  @Column({ type: 'varchar', length: 255 })
  title: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 16, default: 'opened' })
  state: MergeRequestState;

  @Column({ type: 'integer', name: 'author_id', nullable: true })
  authorId: number | null;

  @Column({ type: 'integer', name: 'milestone_id', nullable: true })
  milestoneId: number | null;

  @Column({ type: 'boolean', default: false })
  draft: boolean;

  @Column({ type: 'boolean', default: false })
  squash: boolean;

  @Column({ type: 'boolean', name: 'should_remove_source_branch', nullable: true })
  shouldRemoveSourceBranch: boolean | null;

  @Column({ type: 'boolean', name: 'force_remove_source_branch', default: false })
  forceRemoveSourceBranch: boolean;

  @Column({ type: 'boolean', name: 'discussion_locked', nullable: true })
  discussionLocked: boolean | null;

  @Column({ type: 'boolean', name: 'allow_collaboration', default: false })
  allowCollaboration: boolean;

  @Column({ type: 'timestamptz', name: 'merge_after', nullable: true })
  mergeAfter: Date | null;

  @Column({ type: 'timestamptz', name: 'merged_at', nullable: true })
  mergedAt: Date | null;

  @Column({ type: 'timestamptz', name: 'closed_at', nullable: true })
  closedAt: Date | null;

  @Column({ type: 'timestamptz', name: 'prepared_at', nullable: true })
  preparedAt: Date | null;

  @Column({ type: 'integer', name: 'closed_by_id', nullable: true })
  closedById: number | null;

  @Column({ type: 'integer', name: 'merge_user_id', nullable: true })
  mergeUserId: number | null;

  @Column({ type: 'varchar', length: 64, name: 'merge_commit_sha', nullable: true })
  mergeCommitSha: string | null;

  @Column({ type: 'varchar', length: 64, name: 'squash_commit_sha', nullable: true })
  squashCommitSha: string | null;

  /** An automatic merge is set: the merge request merges as `merge_user` once its checks pass. */
  @Column({ type: 'boolean', name: 'merge_when_pipeline_succeeds', default: false })
  autoMerge: boolean;

  /** What the automatic merge will merge: the head it was set for, messages, squash, branch removal. */
  @Column({ type: 'jsonb', name: 'merge_params', nullable: true })
  mergeParams: AutoMergeParams | null;

  /** A rebase is queued or running. */
  @Column({ type: 'boolean', name: 'rebase_in_progress', default: false })
  rebaseInProgress: boolean;

  /** The source branch's head as last seen (GitLab's `sha`). */
  @Column({ type: 'varchar', length: 64, name: 'head_sha', nullable: true })
  headSha: string | null;

  @Column({ type: 'varchar', length: 32, name: 'merge_status', default: 'unchecked' })
  mergeStatus: MergeStatus;

  @Column({ type: 'text', name: 'merge_error', nullable: true })
  mergeError: string | null;

  /** The last check found target commits missing from the source: a fast-forward needs a rebase. */
  @Column({ type: 'boolean', default: false })
  diverged: boolean;

  /** Seconds. */
  @Column({ type: 'integer', name: 'time_estimate', default: 0 })
  timeEstimate: number;

  /** Seconds. */
  @Column({ type: 'integer', name: 'total_time_spent', default: 0 })
  totalTimeSpent: number;

  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' })
  createdAt: Date;

  @Column({ type: 'timestamptz', name: 'updated_at', default: () => 'now()' })
  updatedAt: Date;
}

/** One diff version: what the merge request changed at one source head against one target head. */
@Entity({ name: 'merge_request_diffs' })
export class MergeRequestDiff {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer', name: 'merge_request_id' })
  mergeRequestId: number;

  /** The merge base of the two heads; null for unrelated histories. */
  @Column({ type: 'varchar', length: 64, name: 'base_commit_sha', nullable: true })
  baseCommitSha: string | null;

  /** The target branch's head. */
  @Column({ type: 'varchar', length: 64, name: 'start_commit_sha' })
  startCommitSha: string;

  /** The source branch's head. */
  @Column({ type: 'varchar', length: 64, name: 'head_commit_sha' })
  headCommitSha: string;

  @Column({ type: 'varchar', length: 64, name: 'patch_id_sha', nullable: true })
  patchIdSha: string | null;

  /** Changed files. */
  @Column({ type: 'integer', name: 'real_size', default: 0 })
  realSize: number;

  @Column({ type: 'integer', name: 'commits_count', default: 0 })
  commitsCount: number;

  @Column({ type: 'varchar', length: 16, default: 'collected' })
  state: 'collected' | 'overflow' | 'empty';

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
