import type { components } from '../../generated/openapi.js';
import type { ProtectedBranch, ProtectedBranchAccessLevel } from './protected-branch.entity.js';

export type ProtectedBranchJson = components['schemas']['ProtectedBranch'];
export type ProtectedBranchAccessLevelJson = components['schemas']['ProtectedBranchAccessLevel'];

/** Names of the users and groups that access levels refer to, loaded once for a page of rules. */
export interface AccessLevelNames {
  users: Map<number, string>;
  groups: Map<number, string>;
}

const ROLE_DESCRIPTIONS: Record<number, string> = {
  0: 'No one',
  30: 'Developers + Maintainers',
  40: 'Maintainers',
  60: 'Administrators',
};

function describe(level: ProtectedBranchAccessLevel, names: AccessLevelNames): string {
  if (level.userId !== null) return names.users.get(level.userId) ?? 'User';
  if (level.groupId !== null) return names.groups.get(level.groupId) ?? 'Group';
  if (level.deployKeyId !== null) return 'Deploy key';
  return ROLE_DESCRIPTIONS[level.accessLevel ?? -1] ?? String(level.accessLevel);
}

export function presentAccessLevel(
  level: ProtectedBranchAccessLevel,
  names: AccessLevelNames,
): ProtectedBranchAccessLevelJson {
  return {
    id: level.id,
    access_level: level.accessLevel as ProtectedBranchAccessLevelJson['access_level'],
    access_level_description: describe(level, names),
    user_id: level.userId,
    group_id: level.groupId,
    ...(level.deployKeyId !== null ? { deploy_key_id: level.deployKeyId } : {}),
  };
}

export function presentProtectedBranch(rule: ProtectedBranch, names: AccessLevelNames): ProtectedBranchJson {
  const levels = (action: ProtectedBranchAccessLevel['action']) =>
    (rule.accessLevels ?? [])
      .filter((level) => level.action === action)
      .sort((a, b) => a.id - b.id)
      .map((level) => presentAccessLevel(level, names));
  return {
    id: rule.id,
    name: rule.name,
    push_access_levels: levels('push'),
    merge_access_levels: levels('merge'),
    unprotect_access_levels: levels('unprotect'),
    allow_force_push: rule.allowForcePush,
    code_owner_approval_required: rule.codeOwnerApprovalRequired,
  };
}
