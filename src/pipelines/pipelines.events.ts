/** Events of the pipelines family, added to the catalog of src/core/events.ts. */

/** A pipeline's jobs are to be moved along (after its creation, or when something it waits on changed). */
export interface PipelineProcessRequested {
  pipelineId: number;
}

/** A delayed job's `start_in` has passed. */
export interface JobDelayElapsed {
  jobId: number;
}

/** A trigger job became pending: its child or downstream pipeline is to be created. */
export interface BridgeTriggerRequested {
  jobId: number;
}

/** A pipeline started by a bridge changed status: the bridge may mirror it (`strategy: depend`). */
export interface DownstreamStatusChanged {
  pipelineId: number;
}

/** A new pipeline ran for a ref: older ones of the same ref may be canceled (auto-cancel). */
export interface AutoCancelRequested {
  pipelineId: number;
}

/** A pipeline's status changed (merge requests waiting on their head pipeline may now merge). */
export interface PipelineStatusChanged {
  pipelineId: number;
  status: string;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'ci.pipeline_process_requested': PipelineProcessRequested;
    'ci.job_delay_elapsed': JobDelayElapsed;
    'ci.bridge_trigger_requested': BridgeTriggerRequested;
    'ci.downstream_status_changed': DownstreamStatusChanged;
    'ci.auto_cancel_requested': AutoCancelRequested;
    'ci.pipeline_status_changed': PipelineStatusChanged;
  }
}
