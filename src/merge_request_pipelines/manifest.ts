import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { pipelineMergeChecks } from './merge-request-extensions.js';
import './merge-request-pipelines.events.js';
import { mergeRequestPipelinesHandlers } from './merge-request-pipelines.handlers.js';
import { MergeRequestPipelinesService } from './merge-request-pipelines.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** Merge request pipelines: the list, their creation, and the automatic merge after them. */
    mergeRequestPipelines: MergeRequestPipelinesService;
  }
}

export const mergeRequestPipelinesManifest = defineFamily({
  name: 'merge_request_pipelines',
  services: [
    defineService(
      'mergeRequestPipelines',
      ['mergeRequests', 'mergeRequestVersions', 'pipelines', 'projects', 'repositories'],
      (core, deps) => new MergeRequestPipelinesService(core, deps),
    ),
  ],
  subscribers: ({ mergeRequestPipelines }) => [
    // GitLab's MergeRequests::RefreshService: a moved source branch gets a merge request pipeline.
    defineSubscriber({
      event: 'refs.updated',
      name: 'merge_request_pipelines.after_push',
      handle: (payload) => mergeRequestPipelines.afterPush(payload),
    }),
    defineSubscriber({
      event: 'merge_request_pipelines.create_requested',
      name: 'merge_request_pipelines.create',
      handle: (payload) => mergeRequestPipelines.runRequested(payload),
    }),
    // GitLab's AutoMergeProcessWorker after a pipeline: a waiting automatic merge is tried again.
    defineSubscriber({
      event: 'ci.pipeline_status_changed',
      name: 'merge_request_pipelines.auto_merge',
      handle: ({ pipelineId }) => mergeRequestPipelines.afterStatusChange(pipelineId),
    }),
  ],
  contributes: {
    mergeChecks: () => pipelineMergeChecks,
    mergeRequestFields: ({ mergeRequestPipelines }) => mergeRequestPipelines.fields,
    mergeRequestHooks: ({ mergeRequestPipelines }) => ({
      created: (tx, mr) => mergeRequestPipelines.created(tx, mr.id),
    }),
  },
  handlers: mergeRequestPipelinesHandlers,
});
