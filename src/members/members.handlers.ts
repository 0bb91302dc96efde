import { isAdmin } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { defineHandlers } from '../core/handler.js';
import { pagedResponse, type RequestInfo } from '../core/pagination.js';
import { presentMember, type MemberRecord } from './member.presenter.js';
import { presentProjectGroupLink } from './project-group-link.presenter.js';
import type { ServiceRegistry } from '../core/family.js';
import type { GroupView } from '../groups/groups.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import type {
  DeleteMemberParams,
  MemberCreateParams,
  MemberListParams,
  MemberUpdateParams,
  SourceRef,
} from './members.service.js';

const present = (record: MemberRecord, caller: Caller, request: RequestInfo) =>
  presentMember(record, { externalUrl: request.externalUrl, showEmail: isAdmin(caller) });

/** What a project's and a group's member operations share; each pair differs only in the source. */
interface MemberContext {
  caller: Caller;
  services: Pick<ServiceRegistry, 'members'>;
  request: RequestInfo;
}
type WithUser = MemberContext & { params: { user_id: number } };

/** The source the pipeline resolved, as the members service takes it. */
const project = (context: { subject: ProjectView }): SourceRef => ({
  kind: 'project',
  view: context.subject,
});
const group = (context: { subject: GroupView }): SourceRef => ({ kind: 'group', view: context.subject });

const members = {
  async list(context: MemberContext & { params: MemberListParams }, source: SourceRef, inherited: boolean) {
    const { params, caller, services, request } = context;
    const page = await services.members.list(caller, source, params, request, inherited);
    return pagedResponse(page, (m) => present(m, caller, request));
  },

  async get({ params, caller, services, request }: WithUser, source: SourceRef, inherited: boolean) {
    const member = await services.members.get(caller, source, params.user_id, inherited);
    return { status: 200 as const, body: present(member, caller, request) };
  },

  async add(context: MemberContext & { body: MemberCreateParams }, source: SourceRef) {
    const { body, caller, services, request } = context;
    const result = await services.members.add(caller, source, body);
    return {
      status: 201 as const,
      body: 'batch' in result ? result.batch : present(result.member, caller, request),
    };
  },

  async update(context: WithUser & { body: MemberUpdateParams }, source: SourceRef) {
    const { params, body, caller, services, request } = context;
    const member = await services.members.update(caller, source, params.user_id, body);
    return { status: 200 as const, body: present(member, caller, request) };
  },

  async remove({ params, caller, services }: WithUser & { params: DeleteMemberParams }, source: SourceRef) {
    await services.members.remove(caller, source, params.user_id, params);
    return { status: 204 as const, body: null };
  },
};

export const membersHandlers = defineHandlers(['members'], {
  listProjectMembers: (context) => members.list(context, project(context), false),
  listProjectMembersWithInherited: (context) => members.list(context, project(context), true),
  getProjectMember: (context) => members.get(context, project(context), false),
  getProjectMemberWithInherited: (context) => members.get(context, project(context), true),
  addProjectMember: (context) => members.add(context, project(context)),
  updateProjectMember: (context) => members.update(context, project(context)),
  removeProjectMember: (context) => members.remove(context, project(context)),

  listGroupMembers: (context) => members.list(context, group(context), false),
  listGroupMembersWithInherited: (context) => members.list(context, group(context), true),
  getGroupMember: (context) => members.get(context, group(context), false),
  getGroupMemberWithInherited: (context) => members.get(context, group(context), true),
  addGroupMember: (context) => members.add(context, group(context)),
  updateGroupMember: (context) => members.update(context, group(context)),
  removeGroupMember: (context) => members.remove(context, group(context)),

  async shareProjectWithGroup({ subject, body, caller, services }) {
    const link = await services.members.share(caller, subject, body);
    return { status: 201, body: presentProjectGroupLink(link) };
  },

  async unshareProjectWithGroup({ params, subject, caller, services }) {
    await services.members.unshare(caller, subject, params.group_id);
    return { status: 204, body: null };
  },
});
