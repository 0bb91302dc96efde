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

/**
 * A pipeline's status changed. Published where a status moves (the pipelines family's processing, and
 * posted commit statuses): merge requests waiting on it may now merge.
 */
export interface PipelineStatusChanged {
  pipelineId: number;
  status: string;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'merge_request_pipelines.create_requested': MergeRequestPipelineRequested;
    'ci.pipeline_status_changed': PipelineStatusChanged;
  }
}
