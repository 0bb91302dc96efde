import { defineHandlers } from '../core/handler.js';
import { presentProject, presentProjectSimple } from './project.presenter.js';

export const projectsHandlers = defineHandlers({
  async listProjects({ params, caller, services, request }) {
    const page = await services.projects.list(caller, params, request);
    const simple = params.simple || !caller.user;
    const body = page.items.map((view) =>
      simple
        ? presentProjectSimple(view, request.externalUrl)
        : presentProject(view, { externalUrl: request.externalUrl, caller }),
    );
    return { status: 200, body, headers: page.headers };
  },

  async getProject({ params, caller, services, request }) {
    const view = await services.projects.find(caller, params.id, {
      statistics: params.statistics,
      customAttributes: params.with_custom_attributes,
    });
    const body = presentProject(view, {
      externalUrl: request.externalUrl,
      caller,
      withPermissions: true,
      withLicense: params.license,
    });
    return { status: 200, body };
  },

  async createProject({ body, caller, services, request }) {
    const view = await services.projects.create(caller, body);
    return {
      status: 201,
      body: presentProject(view, { externalUrl: request.externalUrl, caller, withPermissions: true }),
    };
  },
});
