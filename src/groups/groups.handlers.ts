import { defineHandlers } from '../core/handler.js';
import { presentProject, presentProjectSimple } from '../projects/project.presenter.js';
import { presentGroup, presentGroupDetail } from './group.presenter.js';
import type { GroupListItem } from './groups.service.js';

const presentList = (items: GroupListItem[], externalUrl: string) =>
  items.map(({ group, statistics }) => presentGroup(group, externalUrl, statistics));

export const groupsHandlers = defineHandlers(['groups'], {
  async listGroups({ params, caller, services, request }) {
    const page = await services.groups.list(caller, params, request);
    return { status: 200, body: presentList(page.items, request.externalUrl), headers: page.headers };
  },

  async createGroup({ body, caller, services, request }) {
    const details = await services.groups.create(caller, body);
    const options = { externalUrl: request.externalUrl, caller, withRunnersToken: false };
    return { status: 201, body: presentGroupDetail(details, options) };
  },

  async getGroup({ params, subject, caller, services, request }) {
    const details = await services.groups.detail(caller, subject, params.with_projects ?? true);
    return { status: 200, body: presentGroupDetail(details, { externalUrl: request.externalUrl, caller }) };
  },

  async updateGroup({ subject, body, caller, services, request }) {
    const details = await services.groups.update(caller, subject, body ?? {});
    return { status: 200, body: presentGroupDetail(details, { externalUrl: request.externalUrl, caller }) };
  },

  async deleteGroup({ params, subject, caller, services }) {
    await services.groups.remove(caller, subject, params);
    return { status: 202, body: { message: '202 Accepted' } };
  },

  async listSubgroups({ params, subject, caller, services, request }) {
    const page = await services.groups.listWithin(caller, subject, params, request, false);
    return { status: 200, body: presentList(page.items, request.externalUrl), headers: page.headers };
  },

  async listDescendantGroups({ params, subject, caller, services, request }) {
    const page = await services.groups.listWithin(caller, subject, params, request, true);
    return { status: 200, body: presentList(page.items, request.externalUrl), headers: page.headers };
  },

  async listGroupProjects({ params, subject, caller, services, request }) {
    const page = await services.groups.projects(caller, subject, params, request);
    const simple = params.simple || !caller.user;
    const body = page.items.map((view) =>
      simple
        ? presentProjectSimple(view, request.externalUrl)
        : presentProject(view, { externalUrl: request.externalUrl, caller }),
    );
    return { status: 200, body, headers: page.headers };
  },
});
