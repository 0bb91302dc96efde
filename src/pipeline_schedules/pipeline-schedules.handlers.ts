import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentPipelineBasic } from '../pipelines/pipeline.presenter.js';
import {
  presentSchedule,
  presentScheduleDetails,
  presentScheduleVariable,
} from './pipeline-schedule.presenter.js';

export const pipelineSchedulesHandlers = defineHandlers(['pipelineSchedules', 'pipelines'], {
  async listPipelineSchedules({ params, subject, services, request }) {
    const page = await services.pipelineSchedules.list(subject, params, request);
    return pagedResponse(page, (record) => presentSchedule(record, request.externalUrl));
  },

  async getPipelineSchedule({ params, subject, caller, services }) {
    const record = await services.pipelineSchedules.get(caller, subject, params.pipeline_schedule_id);
    return { status: 200, body: presentScheduleDetails(record, services.pipelines.context(subject)) };
  },

  async createPipelineSchedule({ body, subject, caller, services }) {
    const record = await services.pipelineSchedules.create(caller, subject, body);
    return { status: 201, body: presentScheduleDetails(record, services.pipelines.context(subject)) };
  },

  async updatePipelineSchedule({ params, body, subject, caller, services }) {
    const record = await services.pipelineSchedules.update(
      caller,
      subject,
      params.pipeline_schedule_id,
      body ?? {},
    );
    return { status: 200, body: presentScheduleDetails(record, services.pipelines.context(subject)) };
  },

  async deletePipelineSchedule({ params, subject, caller, services }) {
    await services.pipelineSchedules.remove(caller, subject, params.pipeline_schedule_id);
    return { status: 204, body: null };
  },

  async takePipelineScheduleOwnership({ params, subject, caller, services }) {
    const { record, changed } = await services.pipelineSchedules.takeOwnership(
      caller,
      subject,
      params.pipeline_schedule_id,
    );
    const body = presentScheduleDetails(record, services.pipelines.context(subject));
    return changed ? { status: 201, body } : { status: 200, body };
  },

  async listPipelineSchedulePipelines({ params, subject, services, request }) {
    const page = await services.pipelineSchedules.pipelines(
      subject,
      params.pipeline_schedule_id,
      params,
      request,
    );
    const context = services.pipelines.context(subject);
    return pagedResponse(page, (pipeline) => presentPipelineBasic(pipeline, context));
  },

  async playPipelineSchedule({ params, subject, caller, services }) {
    await services.pipelineSchedules.play(caller, subject, params.pipeline_schedule_id);
    return { status: 201, body: { message: '201 Created' } };
  },

  async createPipelineScheduleVariable({ params, body, subject, caller, services }) {
    const variable = await services.pipelineSchedules.createVariable(
      caller,
      subject,
      params.pipeline_schedule_id,
      body,
    );
    return { status: 201, body: presentScheduleVariable(variable) };
  },

  async getPipelineScheduleVariable({ params, subject, caller, services }) {
    const variable = await services.pipelineSchedules.getVariable(
      caller,
      subject,
      params.pipeline_schedule_id,
      params.key,
    );
    return { status: 200, body: presentScheduleVariable(variable) };
  },

  async updatePipelineScheduleVariable({ params, body, subject, caller, services }) {
    const variable = await services.pipelineSchedules.updateVariable(
      caller,
      subject,
      params.pipeline_schedule_id,
      {
        ...body,
        key: params.key,
      },
    );
    return { status: 200, body: presentScheduleVariable(variable) };
  },

  async deletePipelineScheduleVariable({ params, subject, caller, services }) {
    const variable = await services.pipelineSchedules.deleteVariable(
      caller,
      subject,
      params.pipeline_schedule_id,
      params.key,
    );
    return { status: 202, body: presentScheduleVariable(variable) };
  },
});
