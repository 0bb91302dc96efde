import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentGroupLabel, presentProjectLabel } from './label.presenter.js';

export const labelsHandlers = defineHandlers(['labels'], {
  async listProjectLabels({ params, subject, caller, services, request }) {
    const page = await services.labels.listForProject(caller, subject, params, request);
    return pagedResponse(page, presentProjectLabel);
  },

  async getProjectLabel({ params, subject, caller, services }) {
    const record = await services.labels.getForProject(
      caller,
      subject,
      params.label_id,
      params.include_ancestor_groups,
    );
    return { status: 200, body: presentProjectLabel(record) };
  },

  async createProjectLabel({ subject, body, caller, services }) {
    const record = await services.labels.createForProject(caller, subject, body);
    return { status: 201, body: presentProjectLabel(record) };
  },

  async updateProjectLabel({ params, subject, body, caller, services }) {
    const record = await services.labels.updateForProject(caller, subject, params.label_id, body ?? {});
    return { status: 200, body: presentProjectLabel(record) };
  },

  async updateProjectLabelByName({ subject, body, caller, services }) {
    const record = await services.labels.updateForProjectByName(caller, subject, body ?? {});
    return { status: 200, body: presentProjectLabel(record) };
  },

  async subscribeProjectLabel({ params, subject, caller, services }) {
    const record = await services.labels.setProjectSubscription(caller, subject, params.label_id, true);
    return record ? { status: 201, body: presentProjectLabel(record) } : { status: 304, body: null };
  },

  async unsubscribeProjectLabel({ params, subject, caller, services }) {
    const record = await services.labels.setProjectSubscription(caller, subject, params.label_id, false);
    return record ? { status: 201, body: presentProjectLabel(record) } : { status: 304, body: null };
  },

  async promoteProjectLabel({ params, subject, caller, services }) {
    const record = await services.labels.promote(caller, subject, params.label_id);
    return { status: 200, body: presentGroupLabel(record) };
  },

  async promoteProjectLabelByName({ subject, body, caller, services }) {
    const record = await services.labels.promote(caller, subject, body.name);
    return { status: 200, body: presentGroupLabel(record) };
  },

  async deleteProjectLabel({ params, subject, services }) {
    await services.labels.removeFromProject(subject, params.label_id);
    return { status: 204, body: null };
  },

  async listGroupLabels({ params, subject, caller, services, request }) {
    const page = await services.labels.listForGroup(caller, subject, params, request);
    return pagedResponse(page, presentGroupLabel);
  },

  async getGroupLabel({ params, subject, caller, services }) {
    const record = await services.labels.getForGroup(caller, subject, params.label_id, params);
    return { status: 200, body: presentGroupLabel(record) };
  },

  async createGroupLabel({ subject, body, services }) {
    return { status: 201, body: presentGroupLabel(await services.labels.createForGroup(subject, body)) };
  },

  async updateGroupLabel({ params, subject, body, caller, services }) {
    const record = await services.labels.updateForGroup(caller, subject, params.label_id, body ?? {});
    return { status: 200, body: presentGroupLabel(record) };
  },

  async updateGroupLabelByName({ subject, body, caller, services }) {
    const record = await services.labels.updateForGroupByName(caller, subject, body ?? {});
    return { status: 200, body: presentGroupLabel(record) };
  },

  async subscribeGroupLabel({ params, subject, caller, services }) {
    const record = await services.labels.setGroupSubscription(caller, subject, params.label_id, true);
    return record ? { status: 201, body: presentGroupLabel(record) } : { status: 304, body: null };
  },

  async unsubscribeGroupLabel({ params, subject, caller, services }) {
    const record = await services.labels.setGroupSubscription(caller, subject, params.label_id, false);
    return record ? { status: 201, body: presentGroupLabel(record) } : { status: 304, body: null };
  },

  async deleteGroupLabel({ params, subject, services }) {
    await services.labels.removeFromGroup(subject, params.label_id);
    return { status: 204, body: null };
  },
});
