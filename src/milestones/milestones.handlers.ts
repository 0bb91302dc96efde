import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentMilestone } from './milestone.presenter.js';

export const milestonesHandlers = defineHandlers(['milestones'], {
  async listProjectMilestones({ params, subject, services, request }) {
    const page = await services.milestones.listForProject(subject, params, request);
    return pagedResponse(page, (record) => presentMilestone(record, request.externalUrl));
  },

  async getProjectMilestone({ params, subject, services, request }) {
    return {
      status: 200,
      body: presentMilestone(
        await services.milestones.getForProject(subject, params.milestone_id),
        request.externalUrl,
      ),
    };
  },

  async createProjectMilestone({ subject, body, services, request }) {
    return {
      status: 201,
      body: presentMilestone(await services.milestones.createForProject(subject, body), request.externalUrl),
    };
  },

  async updateProjectMilestone({ params, subject, body, services, request }) {
    const record = await services.milestones.updateForProject(subject, params.milestone_id, body ?? {});
    return { status: 200, body: presentMilestone(record, request.externalUrl) };
  },

  async deleteProjectMilestone({ params, subject, services }) {
    await services.milestones.removeFromProject(subject, params.milestone_id);
    return { status: 204, body: null };
  },

  async listGroupMilestones({ params, subject, caller, services, request }) {
    const page = await services.milestones.listForGroup(caller, subject, params, request);
    return pagedResponse(page, (record) => presentMilestone(record, request.externalUrl));
  },

  async getGroupMilestone({ params, subject, services, request }) {
    return {
      status: 200,
      body: presentMilestone(
        await services.milestones.getForGroup(subject, params.milestone_id),
        request.externalUrl,
      ),
    };
  },

  async createGroupMilestone({ subject, body, services, request }) {
    return {
      status: 201,
      body: presentMilestone(await services.milestones.createForGroup(subject, body), request.externalUrl),
    };
  },

  async updateGroupMilestone({ params, subject, body, services, request }) {
    const record = await services.milestones.updateForGroup(subject, params.milestone_id, body ?? {});
    return { status: 200, body: presentMilestone(record, request.externalUrl) };
  },

  async deleteGroupMilestone({ params, subject, services }) {
    await services.milestones.removeFromGroup(subject, params.milestone_id);
    return { status: 204, body: null };
  },
});
