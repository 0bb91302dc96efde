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
