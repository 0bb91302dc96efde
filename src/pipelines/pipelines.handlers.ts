import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { JobRecords } from './jobs.service.js';
import type { Job } from './pipeline.entity.js';
import {
  presentBridge,
  presentJob,
  presentPipeline,
  presentPipelineBasic,
  type BridgeJson,
  type JobJson,
} from './pipeline.presenter.js';
import type { PipelinesService } from './pipelines.service.js';

async function detail(pipelines: PipelinesService, view: ProjectView, pipelineId: number) {
  const pipeline = await pipelines.find(view, pipelineId);
  return presentPipeline(pipeline, await pipelines.detailContext(view, pipeline));
}

function jobContext(job: Job, records: JobRecords) {
  return {
    ...records.base,
    pipeline: records.pipelines.get(job.pipelineId)!,
    user: job.userId === null ? null : (records.users.get(job.userId) ?? null),
    commit: records.commits.get(job.sha) ?? null,
    extra: records.extra.get(job.id),
  };
}

export const presentJobWith =
  (records: JobRecords) =>
  (job: Job): JobJson =>
    presentJob(job, jobContext(job, records));

export const presentBridgeWith =
  (records: JobRecords) =>
  (job: Job): BridgeJson => {
    const downstream = records.downstream.get(job.id);
    return presentBridge(job, {
      ...jobContext(job, records),
      downstream: downstream?.pipeline ?? null,
      downstreamPath: downstream?.fullPath ?? null,
    });
  };

export const pipelinesHandlers = defineHandlers(['pipelines'], {
  async listProjectPipelines({ params, subject, services, request }) {
    const page = await services.pipelines.list(subject, params, request);
    const ctx = services.pipelines.context(subject);
    return pagedResponse(page, (pipeline) => presentPipelineBasic(pipeline, ctx));
  },

  async createProjectPipeline({ body, subject, caller, services }) {
    const pipeline = await services.pipelines.createThroughApi(subject, caller, body);
    return { status: 201, body: await detail(services.pipelines, subject, pipeline.id) };
  },

  async getLatestProjectPipeline({ params, subject, services }) {
    const pipeline = await services.pipelines.latest(subject, params.ref);
    return {
      status: 200,
      body: presentPipeline(pipeline, await services.pipelines.detailContext(subject, pipeline)),
    };
  },

  async getProjectPipeline({ params, subject, services }) {
    return { status: 200, body: await detail(services.pipelines, subject, params.pipeline_id) };
  },

  async listProjectPipelineVariables({ params, subject, services }) {
    return { status: 200, body: await services.pipelines.variables(subject, params.pipeline_id) };
  },

  async listPipelineJobs({ params, subject, services, request }) {
    const page = await services.pipelines.jobs.list(subject, 'build', params, request, params.pipeline_id);
    return pagedResponse(page, presentJobWith(await services.pipelines.jobs.records(subject, page.items)));
  },

  async listPipelineBridges({ params, subject, services, request }) {
    const page = await services.pipelines.jobs.list(subject, 'bridge', params, request, params.pipeline_id);
    return pagedResponse(page, presentBridgeWith(await services.pipelines.jobs.records(subject, page.items)));
  },

  async listProjectJobs({ params, subject, services, request }) {
    const page = await services.pipelines.jobs.list(subject, 'build', params, request);
    return pagedResponse(page, presentJobWith(await services.pipelines.jobs.records(subject, page.items)));
  },

  async getProjectJob({ params, subject, services }) {
    const job = await services.pipelines.jobs.find(subject, params.job_id);
    return { status: 200, body: presentJobWith(await services.pipelines.jobs.records(subject, [job]))(job) };
  },

  async deleteProjectPipeline({ params, subject, services }) {
    await services.pipelines.remove(subject, params.pipeline_id);
    return { status: 204, body: null };
  },

  async cancelProjectPipeline({ params, subject, services }) {
    const pipeline = await services.pipelines.cancel(subject, params.pipeline_id);
    return {
      status: 201,
      body: presentPipeline(pipeline, await services.pipelines.detailContext(subject, pipeline)),
    };
  },

  async retryProjectPipeline({ params, subject, caller, services }) {
    const pipeline = await services.pipelines.retry(subject, params.pipeline_id, caller.user);
    return {
      status: 201,
      body: presentPipeline(pipeline, await services.pipelines.detailContext(subject, pipeline)),
    };
  },

  async getProjectJobTrace({ params, subject, services }) {
    const trace = await services.pipelines.jobs.trace(subject, params.job_id);
    return {
      status: 200,
      stream: Buffer.from(trace, 'utf8'),
      headers: { 'Content-Type': 'text/plain; charset=utf-8' },
    };
  },

  async cancelProjectJob({ params, subject, services }) {
    const job = await services.pipelines.jobs.cancel(subject, params.job_id);
    return { status: 201, body: presentJobWith(await services.pipelines.jobs.records(subject, [job]))(job) };
  },

  async retryProjectJob({ params, subject, caller, services }) {
    const job = await services.pipelines.jobs.retry(subject, params.job_id, caller.user);
    return { status: 201, body: presentJobWith(await services.pipelines.jobs.records(subject, [job]))(job) };
  },

  async playProjectJob({ params, body, subject, caller, services }) {
    const job = await services.pipelines.playJob(
      subject,
      caller,
      params.job_id,
      body?.job_variables_attributes ?? [],
    );
    return { status: 200, body: presentJobWith(await services.pipelines.jobs.records(subject, [job]))(job) };
  },

  async eraseProjectJob({ params, subject, caller, services }) {
    const job = await services.pipelines.jobs.erase(subject, params.job_id, caller.user);
    return { status: 201, body: presentJobWith(await services.pipelines.jobs.records(subject, [job]))(job) };
  },
});
