import type { Readable } from 'node:stream';
import { ApiError, recordNotFound } from '../core/errors.js';
import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { namespaceWebUrl } from '../namespaces/namespace.presenter.js';
import { presentProjectSimple } from '../projects/project.presenter.js';
import type { ProjectView } from '../projects/projects.service.js';
import { isJobTokenReach } from './contracts.js';

/** A trace PATCH body larger than this is refused (GitLab Runner sends at most a few MB at once). */
const MAX_TRACE_PATCH = 64 * 1024 * 1024;

async function readAll(stream: Readable | undefined): Promise<Buffer> {
  if (!stream) return Buffer.alloc(0);
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of stream) {
    const chunk = Buffer.isBuffer(part) ? part : Buffer.from(part as string);
    size += chunk.length;
    if (size > MAX_TRACE_PATCH) throw new ApiError(413, { message: '413 Request Entity Too Large' });
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

export const runnerJobsHandlers = defineHandlers(['runnerJobs', 'jobTokenScope'], {
  async requestRunnerJob({ body, request, services }) {
    const result = await services.runnerJobs.request(body, request.ip ?? '');
    if (result.job === null) return { status: 204, body: null, headers: result.headers };
    // The payload is built field by field in payload.ts; the response is validated against the contract in tests.
    return { status: 201, body: result.job as never, headers: result.headers };
  },

  async updateRunnerJob({ params, body, services }) {
    const result = await services.runnerJobs.update(params.job_id, body);
    return { status: result.status, body: null, headers: result.headers };
  },

  async appendRunnerJobTrace({ params, caller, request, rawBody, services }) {
    const reach = isJobTokenReach(caller.reach) ? caller.reach : null;
    if (!reach) throw new ApiError(403, { message: '403 Forbidden' });
    const range = request.headers?.['content-range'];
    const headers = await services.runnerJobs.appendTrace(
      params.job_id,
      reach.jobId,
      typeof range === 'string' ? range : undefined,
      () => readAll(rawBody),
    );
    return { status: 202, body: null, headers };
  },

  async getJobTokenScope({ subject, services }) {
    return { status: 200, body: await services.jobTokenScope.settings(subject) };
  },

  async updateJobTokenScope({ subject, body, services }) {
    await services.jobTokenScope.setInbound(subject, body.enabled);
    return { status: 204, body: null };
  },

  async listJobTokenScopeProjects({ subject, params, request, services }) {
    const page = await services.jobTokenScope.projectAllowlist(subject, params, request);
    return pagedResponse(page, (project) =>
      presentProjectSimple({ project } as ProjectView, request.externalUrl),
    );
  },

  async addJobTokenScopeProject({ subject, body, caller, services }) {
    return {
      status: 201,
      body: await services.jobTokenScope.addProject(caller, subject, body.target_project_id),
    };
  },

  async removeJobTokenScopeProject({ subject, params, services }) {
    if (!(await services.jobTokenScope.removeProject(subject, params.target_project_id)))
      throw recordNotFound();
    return { status: 204, body: null };
  },

  async listJobTokenScopeGroups({ subject, params, request, services }) {
    const page = await services.jobTokenScope.groupAllowlist(subject, params, request);
    return pagedResponse(page, (group) => ({
      id: group.id,
      name: group.name,
      web_url: namespaceWebUrl(request.externalUrl, group),
    }));
  },

  async addJobTokenScopeGroup({ subject, body, caller, services }) {
    return {
      status: 201,
      body: await services.jobTokenScope.addGroup(caller, subject, body.target_group_id),
    };
  },

  async removeJobTokenScopeGroup({ subject, params, services }) {
    if (!(await services.jobTokenScope.removeGroup(subject, params.target_group_id))) throw recordNotFound();
    return { status: 204, body: null };
  },
});
