import { isAdmin } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { defineHandlers } from '../core/handler.js';
import type { RequestInfo } from '../core/pagination.js';
import { presentMember, type MemberRecord } from './member.presenter.js';
import { presentProjectGroupLink } from './project-group-link.presenter.js';

const present = (record: MemberRecord, caller: Caller, request: RequestInfo) =>
  presentMember(record, { externalUrl: request.externalUrl, showEmail: isAdmin(caller) });

const project = (id: string | number) => ({ kind: 'project' as const, id });
const group = (id: string | number) => ({ kind: 'group' as const, id });

export const membersHandlers = defineHandlers({
  async listProjectMembers({ params, caller, services, request }) {
    const page = await services.members.list(caller, project(params.id), params, request, false);
    return { status: 200, body: page.items.map((m) => present(m, caller, request)), headers: page.headers };
  },

  async listProjectMembersWithInherited({ params, caller, services, request }) {
    const page = await services.members.list(caller, project(params.id), params, request, true);
    return { status: 200, body: page.items.map((m) => present(m, caller, request)), headers: page.headers };
  },

  async getProjectMember({ params, caller, services, request }) {
    const member = await services.members.get(caller, project(params.id), params.user_id, false);
    return { status: 200, body: present(member, caller, request) };
  },

  async getProjectMemberWithInherited({ params, caller, services, request }) {
    const member = await services.members.get(caller, project(params.id), params.user_id, true);
    return { status: 200, body: present(member, caller, request) };
  },

  async addProjectMember({ params, body, caller, services, request }) {
    const result = await services.members.add(caller, project(params.id), body);
    return { status: 201, body: 'batch' in result ? result.batch : present(result.member, caller, request) };
  },

  async updateProjectMember({ params, body, caller, services, request }) {
    const member = await services.members.update(caller, project(params.id), params.user_id, body);
    return { status: 200, body: present(member, caller, request) };
  },

  async removeProjectMember({ params, caller, services }) {
    await services.members.remove(caller, project(params.id), params.user_id, params);
    return { status: 204, body: null };
  },

  async listGroupMembers({ params, caller, services, request }) {
    const page = await services.members.list(caller, group(params.id), params, request, false);
    return { status: 200, body: page.items.map((m) => present(m, caller, request)), headers: page.headers };
  },

  async listGroupMembersWithInherited({ params, caller, services, request }) {
    const page = await services.members.list(caller, group(params.id), params, request, true);
    return { status: 200, body: page.items.map((m) => present(m, caller, request)), headers: page.headers };
  },

  async getGroupMember({ params, caller, services, request }) {
    const member = await services.members.get(caller, group(params.id), params.user_id, false);
    return { status: 200, body: present(member, caller, request) };
  },

  async getGroupMemberWithInherited({ params, caller, services, request }) {
    const member = await services.members.get(caller, group(params.id), params.user_id, true);
    return { status: 200, body: present(member, caller, request) };
  },

  async addGroupMember({ params, body, caller, services, request }) {
    const result = await services.members.add(caller, group(params.id), body);
    return { status: 201, body: 'batch' in result ? result.batch : present(result.member, caller, request) };
  },

  async updateGroupMember({ params, body, caller, services, request }) {
    const member = await services.members.update(caller, group(params.id), params.user_id, body);
    return { status: 200, body: present(member, caller, request) };
  },

  async removeGroupMember({ params, caller, services }) {
    await services.members.remove(caller, group(params.id), params.user_id, params);
    return { status: 204, body: null };
  },

  async shareProjectWithGroup({ params, body, caller, services }) {
    const link = await services.members.share(caller, params.id, body);
    return { status: 201, body: presentProjectGroupLink(link) };
  },

  async unshareProjectWithGroup({ params, caller, services }) {
    await services.members.unshare(caller, params.id, params.group_id);
    return { status: 204, body: null };
  },
});
