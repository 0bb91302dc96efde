import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentPipeline, presentPipelineBasic } from '../pipelines/pipeline.presenter.js';
import { projectFullPath } from '../pipelines/predefined-variables.js';

export const mergeRequestPipelinesHandlers = defineHandlers(['mergeRequestPipelines'], {
  async listMergeRequestPipelines({ params, subject, services, request }) {
    const page = await services.mergeRequestPipelines.list(
      subject,
      params.merge_request_iid,
      params,
      request,
    );
    const paths = await services.mergeRequestPipelines.projectPaths(subject, page.items);
    return pagedResponse(page, (pipeline) =>
      presentPipelineBasic(pipeline, {
        fullPath: paths.get(pipeline.projectId)!,
        externalUrl: request.externalUrl,
      }),
    );
  },

  async createMergeRequestPipeline({ params, subject, caller, services, request }) {
    const { mergeRequestPipelines } = services;
    const pipeline = await mergeRequestPipelines.create(
      caller,
      subject,
      params.merge_request_iid,
      params.async === true,
    );
    if (!pipeline) return { status: 202, body: null };
    const users = await mergeRequestPipelines.users([pipeline]);
    const paths = await mergeRequestPipelines.projectPaths(subject, [pipeline]);
    const body = presentPipeline(pipeline, {
      fullPath: paths.get(pipeline.projectId) ?? projectFullPath(subject.project),
      externalUrl: request.externalUrl,
      user: pipeline.userId === null ? null : (users.get(pipeline.userId) ?? null),
      warnings: false,
    });
    return { status: 200, body };
  },
});
