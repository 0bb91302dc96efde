import { defineHandlers } from '../core/handler.js';
import { presentGroupLabel, presentProjectLabel } from './label.presenter.js';

export const labelsHandlers = defineHandlers({
  async listProjectLabels({ params, subject, caller, services, request }) {
    const page = await services.labels.listForProject(caller, subject, params, request);
    return { status: 200, body: page.items.map(presentProjectLabel), headers: page.headers };
  },

  async getProjectLabel({ params, subject, services }) {
    const record = await services.labels.getForProject(
      subject,
      params.label_id,
      params.include_ancestor_groups,
    );
    return { status: 200, body: presentProjectLabel(record) };
  },

  async createProjectLabel({ subject, body, services }) {
    return { status: 201, body: presentProjectLabel(await services.labels.createForProject(subject, body)) };
  },

  async updateProjectLabel({ params, subject, body, services }) {
    const record = await services.labels.updateForProject(subject, params.label_id, body ?? {});
    return { status: 200, body: presentProjectLabel(record) };
  },

  async updateProjectLabelByName({ subject, body, services }) {
    const record = await services.labels.updateForProjectByName(subject, body ?? {});
    return { status: 200, body: presentProjectLabel(record) };
  },

  async deleteProjectLabel({ params, subject, services }) {
    await services.labels.removeFromProject(subject, params.label_id);
    return { status: 204, body: null };
  },

  async listGroupLabels({ params, subject, caller, services, request }) {
    const page = await services.labels.listForGroup(caller, subject, params, request);
    return { status: 200, body: page.items.map(presentGroupLabel), headers: page.headers };
  },

  async getGroupLabel({ params, subject, caller, services }) {
    const record = await services.labels.getForGroup(caller, subject, params.label_id, params);
    return { status: 200, body: presentGroupLabel(record) };
  },

  async createGroupLabel({ subject, body, services }) {
    return { status: 201, body: presentGroupLabel(await services.labels.createForGroup(subject, body)) };
  },

  async updateGroupLabel({ params, subject, body, services }) {
    const record = await services.labels.updateForGroup(subject, params.label_id, body ?? {});
    return { status: 200, body: presentGroupLabel(record) };
  },

  async updateGroupLabelByName({ subject, body, services }) {
    const record = await services.labels.updateForGroupByName(subject, body ?? {});
    return { status: 200, body: presentGroupLabel(record) };
  },

  async deleteGroupLabel({ params, subject, services }) {
    await services.labels.removeFromGroup(subject, params.label_id);
    return { status: 204, body: null };
  },
});
