/**
 * The merge checks this family answers itself, registered through its manifest as other families
 * register theirs. Precedence leaves room for others' (approvals at 50, the pipeline checks at 60 and 61,
 * from the merge request pipelines family).
 */
import type { MergeCheck, MergeCheckStatus } from './extension-points.js';

const failedIf = (failed: boolean): MergeCheckStatus => (failed ? 'failed' : 'success');

export const builtInMergeChecks: readonly MergeCheck[] = [
  {
    name: 'draft_status',
    message: 'Merge request must not be draft',
    precedence: 10,
    reported: true,
    blocksMerge: true,
    status: ({ mr }) => failedIf(mr.draft),
  },
  {
    name: 'conflict',
    message: 'Merge conflicts must be resolved',
    precedence: 20,
    reported: true,
    // The merge finds conflicts itself, in the repository.
    blocksMerge: false,
    status: ({ mr }) => failedIf(mr.mergeStatus === 'cannot_be_merged'),
  },
  {
    name: 'need_rebase',
    message: 'Merge request must be rebased, because a fast-forward merge is not possible',
    precedence: 30,
    reported: true,
    blocksMerge: false,
    status: ({ mr, project }) =>
      project.settings.merge_method === 'merge' ? 'inactive' : failedIf(mr.diverged),
  },
  {
    // Threads are read live, so resolving the last one lifts it at once.
    name: 'discussions_not_resolved',
    message: 'Unresolved discussions must be resolved',
    precedence: 40,
    reported: true,
    blocksMerge: true,
    status: ({ mr, project, records }) =>
      project.settings.only_allow_merge_if_all_discussions_are_resolved
        ? failedIf(records.unresolvedDiscussions.has(mr.id))
        : 'inactive',
  },
  {
    name: 'merge_time',
    message: 'Merge request cannot be merged before the merge after time',
    precedence: 70,
    reported: false,
    blocksMerge: true,
    status: ({ mr }) =>
      mr.mergeAfter === null ? 'inactive' : failedIf(mr.mergeAfter.getTime() > Date.now()),
  },
];
