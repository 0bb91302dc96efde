import type { operations } from '../../generated/openapi.js';
import type { Label } from '../labels/label.entity.js';
import type { MilestoneRecord } from '../milestones/milestones.service.js';
import type { User } from '../users/user.entity.js';
import type { MergeRequest } from './merge-request.entity.js';

type ListQuery = NonNullable<operations['listProjectMergeRequests']['parameters']['query']>;
export type ListMergeRequestsParams = ListQuery & { scope?: string; iids?: number[] };

/** The project a merge request belongs to, as its presentation needs it. */
export interface MergeRequestProject {
  id: number;
  fullPath: string;
  squashOption: string;
  mergeMethod: string;
  onlyAllowMergeIfAllDiscussionsAreResolved: boolean;
}

/** Merge requests with everything their presentation reads, loaded a page at a time. */
export interface MergeRequestRecords {
  items: MergeRequest[];
  projects: Map<number, MergeRequestProject>;
  users: Map<number, User>;
  assignees: Map<number, number[]>;
  reviewers: Map<number, number[]>;
  /** Notes written by users (not system notes), per merge request. */
  userNotesCounts: Map<number, number>;
  /** Merge requests with a thread not yet resolved. */
  unresolvedDiscussions: Set<number>;
  /** Each merge request's labels, sorted by name. */
  labels: Map<number, Label[]>;
  /** Milestones by id. */
  milestones: Map<number, MilestoneRecord>;
  /**
   * Merge requests from forks, each with whether collaboration is allowed now (GitLab's
   * `allow_collaboration`, which also asks `collaborative_push_possible?`); others are left out.
   */
  collaboration: Map<number, boolean>;
  /** `thumbsup` and `thumbsdown` reactions on each merge request (not on its notes). */
  votes: Map<number, { up: number; down: number }>;
  /** Labels as objects rather than names (`with_labels_details=true`). */
  withLabelsDetails?: boolean;
  /** Approvals each open merge request still lacks (none without approvals). */
  approvalsLeft: Map<number, number>;
}
