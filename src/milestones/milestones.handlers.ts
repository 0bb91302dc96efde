import { defineHandlers } from '../core/handler.js';
import { presentMilestone } from './milestone.presenter.js';

export const milestonesHandlers = defineHandlers({
  async listProjectMilestones({ params, subject, services, request }) {
    const page = await services.milestones.listForProject(subject, params, request);
    return { status: 200, body: page.items.map(presentMilestone), headers: page.headers };
  },

  async getProjectMilestone({ params, subject, services }) {
    return {
      status: 200,
      body: presentMilestone(await services.milestones.getForProject(subject, params.milestone_id)),
    };
  },

  async createProjectMilestone({ subject, body, services }) {
    return { status: 201, body: presentMilestone(await services.milestones.createForProject(subject, body)) };
  },

  async updateProjectMilestone({ params, subject, body, services }) {
    const record = await services.milestones.updateForProject(subject, params.milestone_id, body ?? {});
    return { status: 200, body: presentMilestone(record) };
  },

  async deleteProjectMilestone({ params, subject, services }) {
    await services.milestones.removeFromProject(subject, params.milestone_id);
    return { status: 204, body: null };
  },

  async listGroupMilestones({ params, subject, caller, services, request }) {
    const page = await services.milestones.listForGroup(caller, subject, params, request);
    return { status: 200, body: page.items.map(presentMilestone), headers: page.headers };
  },

  async getGroupMilestone({ params, subject, services }) {
    return {
      status: 200,
      body: presentMilestone(await services.milestones.getForGroup(subject, params.milestone_id)),
    };
  },

  async createGroupMilestone({ subject, body, services }) {
    return { status: 201, body: presentMilestone(await services.milestones.createForGroup(subject, body)) };
  },

  async updateGroupMilestone({ params, subject, body, services }) {
    const record = await services.milestones.updateForGroup(subject, params.milestone_id, body ?? {});
    return { status: 200, body: presentMilestone(record) };
  },

  async deleteGroupMilestone({ params, subject, services }) {
    await services.milestones.removeFromGroup(subject, params.milestone_id);
    return { status: 204, body: null };
  },
});
