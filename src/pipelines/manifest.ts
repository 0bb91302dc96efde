import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { pipelinesAbilities } from './abilities.js';
import { PipelineChanges1768100100000 } from './migrations/1768100100000-pipeline-changes.js';
import { Pipelines1768100000000 } from './migrations/1768100000000-pipelines.js';
import { Job, Pipeline, PipelineStage, PipelineVariable, ResourceGroup } from './pipeline.entity.js';
import { pipelinesHandlers } from './pipelines.handlers.js';
import { PipelinesService } from './pipelines.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** Pipelines: creation (`create`), reads, processing, and their jobs (`pipelines.jobs`). */
    pipelines: PipelinesService;
  }
}

export const pipelinesManifest = defineFamily({
  name: 'pipelines',
  abilities: pipelinesAbilities,
  entities: [Pipeline, PipelineStage, Job, PipelineVariable, ResourceGroup],
  migrations: [Pipelines1768100000000, PipelineChanges1768100100000],
  services: [
    defineService(
      'pipelines',
      ['projects', 'repositories', 'protectedRefs', 'ciVariables', 'planLimits'],
      (core, deps) => new PipelinesService(core, deps),
    ),
  ],
  subscribers: ({ pipelines }) => [
    // A push runs the pushed branches' and tags' configurations (GitLab's post-receive CreatePipelineWorker).
    defineSubscriber({
      event: 'refs.updated',
      name: 'pipelines.create_after_push',
      handle: (payload) => pipelines.createForPush(payload),
    }),
    // A pipeline's jobs move along after its creation, and when a resource group it waits on is free.
    defineSubscriber({
      event: 'ci.pipeline_process_requested',
      name: 'pipelines.process',
      handle: ({ pipelineId }) => pipelines.processing.process(pipelineId),
    }),
    // A delayed job becomes pending once its `start_in` has passed.
    defineSubscriber({
      event: 'ci.job_delay_elapsed',
      name: 'pipelines.delayed_job',
      handle: ({ jobId }) => pipelines.bridges.startDelayed(jobId),
    }),
    // A pending trigger job creates its child or downstream pipeline off the request.
    defineSubscriber({
      event: 'ci.bridge_trigger_requested',
      name: 'pipelines.trigger_downstream',
      handle: ({ jobId }) => pipelines.bridges.trigger(jobId),
    }),
    // A bridge with `strategy: depend` follows the status of the pipeline it started.
    defineSubscriber({
      event: 'ci.downstream_status_changed',
      name: 'pipelines.mirror_downstream',
      handle: ({ pipelineId }) => pipelines.bridges.mirror(pipelineId),
    }),
    // A new pipeline on a ref cancels the older ones' interruptible work (auto-cancel redundant pipelines).
    defineSubscriber({
      event: 'ci.auto_cancel_requested',
      name: 'pipelines.auto_cancel',
      handle: ({ pipelineId }) => pipelines.bridges.autoCancel(pipelineId),
    }),
  ],
  handlers: pipelinesHandlers,
});
