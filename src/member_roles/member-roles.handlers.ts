import { defineHandlers } from '../core/handler.js';
import { presentMemberRole } from './member-role.presenter.js';

export const memberRolesHandlers = defineHandlers(['memberRoles'], {
  async listInstanceMemberRoles({ services }) {
    const roles = await services.memberRoles.list(null);
    return { status: 200, body: roles.map(presentMemberRole) };
  },

  async createInstanceMemberRole({ body, services }) {
    return { status: 201, body: presentMemberRole(await services.memberRoles.create(null, body)) };
  },

  async updateInstanceMemberRole({ params, body, services }) {
    const role = await services.memberRoles.update(null, params.member_role_id, body);
    return { status: 200, body: presentMemberRole(role) };
  },

  async deleteInstanceMemberRole({ params, services }) {
    await services.memberRoles.remove(null, params.member_role_id);
    return { status: 204, body: null };
  },

  async listGroupMemberRoles({ subject, services }) {
    const roles = await services.memberRoles.list(subject.group);
    return { status: 200, body: roles.map(presentMemberRole) };
  },

  async createGroupMemberRole({ subject, body, services }) {
    return { status: 201, body: presentMemberRole(await services.memberRoles.create(subject.group, body)) };
  },

  async updateGroupMemberRole({ subject, params, body, services }) {
    const role = await services.memberRoles.update(subject.group, params.member_role_id, body);
    return { status: 200, body: presentMemberRole(role) };
  },

  async deleteGroupMemberRole({ subject, params, services }) {
    await services.memberRoles.remove(subject.group, params.member_role_id);
    return { status: 204, body: null };
  },
});
