import { isAdmin } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { defineHandlers } from '../core/handler.js';
import type { RequestInfo } from '../core/pagination.js';
import { presentMember, type MemberRecord } from './member.presenter.js';
import { presentProjectGroupLink } from './project-group-link.presenter.js';
import type { ServiceRegistry } from '../core/family.js';
import type {
  DeleteMemberParams,
  MemberCreateParams,
  MemberListParams,
  MemberUpdateParams,
  SourceRef,
} from './members.service.js';

const present = (record: MemberRecord, caller: Caller, request: RequestInfo) =>
  presentMember(record, { externalUrl: request.externalUrl, showEmail: isAdmin(caller) });

type SourceKind = SourceRef['kind'];

/** What a project's and a group's member operations share; each pair differs only in the source kind. */
interface MemberContext {
  params: { id: string | number };
  caller: Caller;
  services: ServiceRegistry;
  request: RequestInfo;
}
type WithUser = MemberContext & { params: { user_id: number } };

const members = {
  async list(context: MemberContext & { params: MemberListParams }, kind: SourceKind, inherited: boolean) {
    const { params, caller, services, request } = context;
    const page = await services.members.list(caller, { kind, id: params.id }, params, request, inherited);
    return {
      status: 200 as const,
      body: page.items.map((m) => present(m, caller, request)),
      headers: page.headers,
    };
  },

  async get({ params, caller, services, request }: WithUser, kind: SourceKind, inherited: boolean) {
    const member = await services.members.get(caller, { kind, id: params.id }, params.user_id, inherited);
    return { status: 200 as const, body: present(member, caller, request) };
  },

  async add(context: MemberContext & { body: MemberCreateParams }, kind: SourceKind) {
    const { params, body, caller, services, request } = context;
    const result = await services.members.add(caller, { kind, id: params.id }, body);
    return {
      status: 201 as const,
      body: 'batch' in result ? result.batch : present(result.member, caller, request),
    };
  },

  async update(context: WithUser & { body: MemberUpdateParams }, kind: SourceKind) {
    const { params, body, caller, services, request } = context;
    const member = await services.members.update(caller, { kind, id: params.id }, params.user_id, body);
    return { status: 200 as const, body: present(member, caller, request) };
  },

  async remove({ params, caller, services }: WithUser & { params: DeleteMemberParams }, kind: SourceKind) {
    await services.members.remove(caller, { kind, id: params.id }, params.user_id, params);
    return { status: 204 as const, body: null };
  },
};

export const membersHandlers = defineHandlers({
  listProjectMembers: (context) => members.list(context, 'project', false),
  listProjectMembersWithInherited: (context) => members.list(context, 'project', true),
  getProjectMember: (context) => members.get(context, 'project', false),
  getProjectMemberWithInherited: (context) => members.get(context, 'project', true),
  addProjectMember: (context) => members.add(context, 'project'),
  updateProjectMember: (context) => members.update(context, 'project'),
  removeProjectMember: (context) => members.remove(context, 'project'),

  listGroupMembers: (context) => members.list(context, 'group', false),
  listGroupMembersWithInherited: (context) => members.list(context, 'group', true),
  getGroupMember: (context) => members.get(context, 'group', false),
  getGroupMemberWithInherited: (context) => members.get(context, 'group', true),
  addGroupMember: (context) => members.add(context, 'group'),
  updateGroupMember: (context) => members.update(context, 'group'),
  removeGroupMember: (context) => members.remove(context, 'group'),

  async shareProjectWithGroup({ params, body, caller, services }) {
    const link = await services.members.share(caller, params.id, body);
    return { status: 201, body: presentProjectGroupLink(link) };
  },

  async unshareProjectWithGroup({ params, caller, services }) {
    await services.members.unshare(caller, params.id, params.group_id);
    return { status: 204, body: null };
  },
});
