import type { components } from '../../generated/openapi.js';
import { describeEntry, type EntryNames } from './access-entries.js';
import type { ProtectedBranch, ProtectedBranchAccessLevel } from './protected-branch.entity.js';

export type ProtectedBranchJson = components['schemas']['ProtectedBranch'];
export type ProtectedBranchAccessLevelJson = components['schemas']['ProtectedBranchAccessLevel'];

export function presentAccessLevel(
  level: ProtectedBranchAccessLevel,
  names: EntryNames,
): ProtectedBranchAccessLevelJson {
  return {
    id: level.id,
    access_level: level.accessLevel as ProtectedBranchAccessLevelJson['access_level'],
    access_level_description: describeEntry(level, names),
    user_id: level.userId,
    group_id: level.groupId,
    ...(level.deployKeyId !== null ? { deploy_key_id: level.deployKeyId } : {}),
  };
}

export function presentProtectedBranch(rule: ProtectedBranch, names: EntryNames): ProtectedBranchJson {
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
