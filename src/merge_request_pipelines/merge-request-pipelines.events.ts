/** Events of the merge request pipelines family, added to the catalog of src/core/events.ts. */

/**
 * A merge request pipeline is to be created on `sha`, the source head a merge request was opened with or
 * its source branch was moved to; `requested` when a user asked for it (`async=true`), else only if the
 * configuration has jobs for merge request pipelines (and none exists yet for that head).
 */
export interface MergeRequestPipelineRequested {
  mergeRequestId: number;
  userId: number | null;
  sha: string | null;
  requested: boolean;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'merge_request_pipelines.create_requested': MergeRequestPipelineRequested;
  }
}
