import { defineHandlers } from '../core/handler.js';
import type { Caller } from '../core/auth.js';
import type { RequestInfo } from '../core/pagination.js';
import { presentProject, presentProjectSimple } from './project.presenter.js';
import type { ProjectView } from './projects.service.js';

/** A single project, as every endpoint that returns one shows it to its caller. */
const presentSingle = (view: ProjectView, caller: Caller, request: RequestInfo) =>
  presentProject(view, { externalUrl: request.externalUrl, caller, withPermissions: true });

/** A page of a project list: the simple shape without a token or with `simple=true`. */
const presentPage = (
  items: ProjectView[],
  params: { simple?: boolean },
  caller: Caller,
  request: RequestInfo,
) =>
  items.map((view) =>
    params.simple || !caller.user
      ? presentProjectSimple(view, request.externalUrl)
      : presentProject(view, { externalUrl: request.externalUrl, caller }),
  );

export const projectsHandlers = defineHandlers(['projectForks', 'projectLists', 'projects', 'repositories'], {
  async listProjects({ params, caller, services, request }) {
    const page = await services.projectLists.list(caller, params, request);
    return { status: 200, body: presentPage(page.items, params, caller, request), headers: page.headers };
  },

  async listProjectForks({ params, subject, caller, services, request }) {
    const page = await services.projectLists.listForks(caller, subject, params, request);
    return { status: 200, body: presentPage(page.items, params, caller, request), headers: page.headers };
  },

  async forkProject({ subject, body, caller, services, request }) {
    const view = await services.projectForks.fork(caller, subject, body ?? {});
    return { status: 201, body: presentSingle(view, caller, request) };
  },

  async createProjectForkRelation({ params, caller, services, request }) {
    const view = await services.projectForks.linkFork(caller, params.id, params.forked_from_id);
    return { status: 201, body: presentSingle(view, caller, request) };
  },

  async deleteProjectForkRelation({ subject, services }) {
    const unlinked = await services.projectForks.unlinkFork(subject);
    return unlinked ? { status: 204, body: null } : { status: 304, body: null };
  },

  async getProject({ params, subject, caller, services, request }) {
    const view = await services.projects.details(caller, subject, {
      statistics: params.statistics,
      customAttributes: params.with_custom_attributes,
      shares: true,
      forkSource: true,
      contributed: true,
    });
    const body = presentProject(view, {
      externalUrl: request.externalUrl,
      caller,
      withPermissions: true,
      license: params.license ? await services.projects.license(view) : undefined,
    });
    return { status: 200, body };
  },

  async createProject({ body, caller, services, request }) {
    const view = await services.projects.create(caller, body);
    return { status: 201, body: presentSingle(view, caller, request) };
  },

  async updateProject({ subject, body, caller, services, request }) {
    const view = await services.projects.update(caller, subject, body ?? {});
    return { status: 200, body: presentSingle(view, caller, request) };
  },

  async deleteProject({ params, subject, caller, services }) {
    await services.projects.delete(caller, subject, params);
    return { status: 202, body: { message: '202 Accepted' } };
  },

  async archiveProject({ subject, caller, services, request }) {
    const view = await services.projects.setArchived(caller, subject, true);
    return { status: 201, body: presentSingle(view, caller, request) };
  },

  async unarchiveProject({ subject, caller, services, request }) {
    const view = await services.projects.setArchived(caller, subject, false);
    return { status: 201, body: presentSingle(view, caller, request) };
  },

  async startProjectHousekeeping({ subject, body, services }) {
    await services.repositories.requestHousekeeping(subject, body?.task);
    return { status: 201, body: null };
  },
});
