/** Events of the merge requests family, added to the catalog of src/core/events.ts. */

/** A merge request's mergeability is to be computed again (after a push, a create, or on request). */
export interface MergeStatusCheckRequested {
  mergeRequestId: number;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'merge_request.merge_status_check_requested': MergeStatusCheckRequested;
  }
}

/** What one merge request update changed: its subscribers write the system notes. */
export interface MergeRequestChanged {
  mergeRequestId: number;
  /** Identifies the update, so that a retried job records it once. */
  changeId: string;
  actorId: number | null;
  /** When the change was made (ISO 8601). */
  at: string;
  changes: {
    state?: 'closed' | 'reopened' | 'merged';
    title?: { from: string; to: string };
    draft?: boolean;
    description?: boolean;
    discussionLocked?: boolean;
    /** `merge_after` changed (no system note; an automatic merge may now go through). */
    mergeAfter?: boolean;
    assignees?: { added: number[]; removed: number[] };
    reviewers?: { added: number[]; removed: number[] };
  };
}

declare module '../core/events.js' {
  interface EventCatalog {
    'merge_request.changed': MergeRequestChanged;
  }
}

/** A merge request was merged; its source branch goes when the merge asked for it and the merger may. */
export interface MergeRequestMerged {
  mergeRequestId: number;
  userId: number | null;
  /** Delete the source branch, if it still points at this head. */
  removeSourceBranchAt: string | null;
}

/** A rebase was requested (`PUT …/rebase`); `rebase_in_progress` is set until it ends. */
export interface MergeRequestRebaseRequested {
  mergeRequestId: number;
  userId: number;
}

/** A merge request with an automatic merge may have become mergeable: try it. */
export interface AutoMergeCheck {
  mergeRequestId: number;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'merge_request.auto_merge_check': AutoMergeCheck;
    'merge_request.merged': MergeRequestMerged;
    'merge_request.rebase_requested': MergeRequestRebaseRequested;
  }
}
