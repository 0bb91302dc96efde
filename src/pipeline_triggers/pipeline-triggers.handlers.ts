import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentPipeline } from '../pipelines/pipeline.presenter.js';
import { presentTrigger } from './trigger.presenter.js';

export const pipelineTriggersHandlers = defineHandlers(['pipelineTriggers', 'pipelines'], {
  async triggerPipeline({ params, body, services }) {
    const { view, pipeline } = await services.pipelineTriggers.trigger(String(params.id), body);
    return {
      status: 201,
      body: presentPipeline(pipeline, await services.pipelines.detailContext(view, pipeline)),
    };
  },

  async listPipelineTriggers({ params, subject, caller, services, request }) {
    const page = await services.pipelineTriggers.list(subject, params, request);
    return pagedResponse(page, (record) => presentTrigger(record, caller, request.externalUrl));
  },

  async getPipelineTrigger({ params, subject, caller, services, request }) {
    const record = await services.pipelineTriggers.get(subject, params.trigger_id);
    return { status: 200, body: presentTrigger(record, caller, request.externalUrl) };
  },

  async createPipelineTrigger({ body, subject, caller, services, request }) {
    const record = await services.pipelineTriggers.create(caller, subject, body.description);
    return { status: 201, body: presentTrigger(record, caller, request.externalUrl) };
  },

  async updatePipelineTrigger({ params, body, subject, caller, services, request }) {
    const record = await services.pipelineTriggers.update(
      caller,
      subject,
      params.trigger_id,
      body?.description,
    );
    return { status: 200, body: presentTrigger(record, caller, request.externalUrl) };
  },

  async deletePipelineTrigger({ params, subject, services }) {
    await services.pipelineTriggers.remove(subject, params.trigger_id);
    return { status: 204, body: null };
  },
});
