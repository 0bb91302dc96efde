import type { components } from '../../generated/openapi.js';
import { MEMBER_ROLE_PERMISSIONS } from '../core/abilities.js';
import type { MemberRole } from './member-role.entity.js';

export type MemberRoleJson = components['schemas']['MemberRole'];

/** Every flag is shown; those the role does not enable are false. */
export function presentMemberRole(role: MemberRole): MemberRoleJson {
  const enabled = new Set(role.permissions);
  const flags = Object.fromEntries(MEMBER_ROLE_PERMISSIONS.map((flag) => [flag, enabled.has(flag)]));
  return {
    id: role.id,
    name: role.name,
    description: role.description,
    group_id: role.namespaceId,
    base_access_level: role.baseAccessLevel as MemberRoleJson['base_access_level'],
    ...(flags as Pick<MemberRoleJson, (typeof MEMBER_ROLE_PERMISSIONS)[number]>),
  };
}
