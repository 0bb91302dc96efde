import type { components } from '../../generated/openapi.js';
import type { MemberRole } from '../member_roles/member-role.entity.js';
import { presentMemberRole } from '../member_roles/member-role.presenter.js';
import type { User } from '../users/user.entity.js';
import { presentUserSummary } from '../users/user.presenter.js';

export type MemberJson = components['schemas']['Member'];

/** A membership as the API shows it: direct, or the effective one of the lists with inherited members. */
export interface MemberRecord {
  user: User;
  accessLevel: number;
  createdAt: Date;
  expiresAt: string | null;
  /** Null when nobody added the member, or when the caller may not see where the membership comes from. */
  createdBy: User | null;
  /** The custom role the membership carries, if any. */
  memberRole?: MemberRole | null;
}

export function presentMember(
  record: MemberRecord,
  options: { externalUrl: string; showEmail: boolean },
): MemberJson {
  return {
    ...presentUserSummary(record.user, options.externalUrl),
    access_level: record.accessLevel,
    created_at: record.createdAt.toISOString(),
    ...(record.createdBy ? { created_by: presentUserSummary(record.createdBy, options.externalUrl) } : {}),
    expires_at: record.expiresAt,
    membership_state: 'active',
    ...(record.memberRole ? { member_role: presentMemberRole(record.memberRole) } : {}),
    ...(options.showEmail ? { email: record.user.email } : {}),
  };
}
