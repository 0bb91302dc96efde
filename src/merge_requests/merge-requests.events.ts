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
    state?: 'closed' | 'reopened';
    title?: { from: string; to: string };
    draft?: boolean;
    description?: boolean;
    discussionLocked?: boolean;
    assignees?: { added: number[]; removed: number[] };
    reviewers?: { added: number[]; removed: number[] };
  };
}

declare module '../core/events.js' {
  interface EventCatalog {
    'merge_request.changed': MergeRequestChanged;
  }
}
