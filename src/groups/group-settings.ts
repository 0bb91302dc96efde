import crypto from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import { AccessLevel } from '../core/access-level.js';

type Schemas = components['schemas'];
export type BranchProtectionDefaults = Schemas['BranchProtectionDefaults'];
export type ProjectCreationLevel = Schemas['ProjectCreationLevel'];
export type SubgroupCreationLevel = Schemas['SubgroupCreationLevel'];

/** What a group stores in `namespaces.settings`, every key resolved. */
export interface GroupSettings {
  request_access_enabled: boolean;
  project_creation_level: ProjectCreationLevel;
  subgroup_creation_level: SubgroupCreationLevel;
  share_with_group_lock: boolean;
  require_two_factor_authentication: boolean;
  two_factor_grace_period: number;
  lfs_enabled: boolean;
  emails_enabled: boolean;
  show_diff_preview_in_email: boolean;
  mentions_disabled: boolean | null;
  default_branch: string | null;
  default_branch_protection: 0 | 1 | 2 | 3 | 4;
  default_branch_protection_defaults: BranchProtectionDefaults;
  auto_devops_enabled: boolean | null;
  math_rendering_limits_enabled: boolean;
  lock_math_rendering_limits_enabled: boolean;
  shared_runners_setting: Schemas['SharedRunnersSetting'];
  prevent_sharing_groups_outside_hierarchy: boolean;
  /** Generated on creation; groups made before it existed have none until one is generated. */
  runners_token?: string;
}

const push = (level: number) => [{ access_level: level as 30 | 40 }];

/** GitLab's branch protection levels (0-4) as the detailed defaults they stand for. */
export function protectionDefaults(
  level: GroupSettings['default_branch_protection'],
): BranchProtectionDefaults {
  const { Developer, Maintainer } = AccessLevel;
  switch (level) {
    case 0:
      return { allowed_to_push: push(Developer), allow_force_push: true, allowed_to_merge: push(Developer) };
    case 1:
      return {
        allowed_to_push: push(Developer),
        allow_force_push: false,
        allowed_to_merge: push(Maintainer),
      };
    case 3:
      return { allowed_to_push: push(Maintainer), allow_force_push: true, allowed_to_merge: push(Developer) };
    case 4:
      return {
        allowed_to_push: push(Maintainer),
        allow_force_push: true,
        allowed_to_merge: push(Maintainer),
        developer_can_initial_push: true,
      };
    default:
      return {
        allowed_to_push: push(Maintainer),
        allow_force_push: false,
        allowed_to_merge: push(Maintainer),
        developer_can_initial_push: false,
      };
  }
}

export const GROUP_SETTING_DEFAULTS: GroupSettings = {
  request_access_enabled: true,
  project_creation_level: 'developer',
  subgroup_creation_level: 'maintainer',
  share_with_group_lock: false,
  require_two_factor_authentication: false,
  two_factor_grace_period: 48,
  lfs_enabled: true,
  emails_enabled: true,
  show_diff_preview_in_email: true,
  mentions_disabled: null,
  default_branch: null,
  default_branch_protection: 2,
  default_branch_protection_defaults: protectionDefaults(2),
  auto_devops_enabled: null,
  math_rendering_limits_enabled: true,
  lock_math_rendering_limits_enabled: false,
  shared_runners_setting: 'enabled',
  prevent_sharing_groups_outside_hierarchy: false,
};

const SETTING_KEYS = Object.keys(GROUP_SETTING_DEFAULTS) as Array<keyof GroupSettings>;

/** A group's stored settings over the defaults. */
export function groupSettings(stored: Record<string, unknown> | null | undefined): GroupSettings {
  return { ...GROUP_SETTING_DEFAULTS, ...(stored as Partial<GroupSettings>) };
}

/**
 * The settings after applying a create or update request. Deprecated parameters map to their
 * successors, which win when both are sent.
 */
export function applySettingParams(current: GroupSettings, params: Record<string, unknown>): GroupSettings {
  const next: GroupSettings = { ...current };
  const target = next as unknown as Record<string, unknown>;
  for (const key of SETTING_KEYS) if (params[key] !== undefined) target[key] = params[key];
  if (params.emails_enabled === undefined && typeof params.emails_disabled === 'boolean')
    next.emails_enabled = !params.emails_disabled;
  if (
    params.default_branch_protection !== undefined &&
    params.default_branch_protection_defaults === undefined
  )
    next.default_branch_protection_defaults = protectionDefaults(next.default_branch_protection);
  return next;
}

export const newRunnersToken = () => `GR1348941${crypto.randomBytes(15).toString('base64url')}`;

/** The least role a `project_creation_level` lets create projects; null when only administrators may. */
export function projectCreationMinimum(level: ProjectCreationLevel): number | null {
  switch (level) {
    case 'developer':
      return AccessLevel.Developer;
    case 'maintainer':
      return AccessLevel.Maintainer;
    case 'owner':
      return AccessLevel.Owner;
    default:
      return null;
  }
}

/** The least role a `subgroup_creation_level` lets create subgroups. */
export const subgroupCreationMinimum = (level: SubgroupCreationLevel) =>
  level === 'owner' ? AccessLevel.Owner : AccessLevel.Maintainer;
