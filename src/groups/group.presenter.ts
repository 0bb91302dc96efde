import type { components } from '../../generated/openapi.js';
import { canGroup, visibilityName } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import type { Namespace } from '../namespaces/namespace.entity.js';
import { namespaceWebUrl } from '../namespaces/namespace.presenter.js';
import { presentProject } from '../projects/project.presenter.js';
import type { ProjectView } from '../projects/projects.service.js';
import { groupSettings } from './group-settings.js';
import type { GroupDetails, GroupStatisticsJson } from './groups.service.js';

type Schemas = components['schemas'];
export type GroupJson = Schemas['Group'];
export type GroupDetailJson = Schemas['GroupDetail'];

/** The instance's one organization: forge-api has no organizations of its own. */
const ORGANIZATION_ID = 1;

/** The list shape, also the first part of the detail. */
export function presentGroup(
  group: Namespace,
  externalUrl: string,
  statistics?: GroupStatisticsJson,
): GroupJson {
  const settings = groupSettings(group.settings);
  const json: GroupJson = {
    id: group.id,
    web_url: namespaceWebUrl(externalUrl, group),
    name: group.name,
    path: group.path,
    description: group.description,
    visibility: visibilityName(group.visibilityLevel),
    share_with_group_lock: settings.share_with_group_lock,
    require_two_factor_authentication: settings.require_two_factor_authentication,
    two_factor_grace_period: settings.two_factor_grace_period,
    project_creation_level: settings.project_creation_level,
    auto_devops_enabled: settings.auto_devops_enabled,
    subgroup_creation_level: settings.subgroup_creation_level,
    emails_disabled: !settings.emails_enabled,
    emails_enabled: settings.emails_enabled,
    show_diff_preview_in_email: settings.show_diff_preview_in_email,
    mentions_disabled: settings.mentions_disabled,
    lfs_enabled: settings.lfs_enabled,
    archived: false,
    math_rendering_limits_enabled: settings.math_rendering_limits_enabled,
    lock_math_rendering_limits_enabled: settings.lock_math_rendering_limits_enabled,
    default_branch: settings.default_branch,
    default_branch_protection: settings.default_branch_protection,
    default_branch_protection_defaults: settings.default_branch_protection_defaults,
    avatar_url: null,
    request_access_enabled: settings.request_access_enabled,
    full_name: group.fullName,
    full_path: group.fullPath,
    created_at: group.createdAt.toISOString(),
    parent_id: group.parentId,
    organization_id: ORGANIZATION_ID,
    shared_runners_setting: settings.shared_runners_setting,
    max_artifacts_size: null,
    marked_for_deletion_on: group.markedForDeletionAt?.toISOString().slice(0, 10) ?? null,
  };
  if (statistics) json.statistics = statistics;
  return json;
}

/**
 * The detail shape of reads and updates, and, without `runners_token` as in GitLab
 * (`withRunnersToken: false`), of creation.
 */
export function presentGroupDetail(
  details: GroupDetails,
  options: { externalUrl: string; caller: Caller; withRunnersToken?: boolean },
): GroupDetailJson {
  const { group, subject } = details;
  const { externalUrl, caller } = options;
  // Group-to-group shares do not exist yet.
  const json: GroupDetailJson = Object.assign(presentGroup(group, externalUrl), { shared_with_groups: [] });
  const settings = groupSettings(group.settings);
  const showToken = options.withRunnersToken !== false && canGroup(caller, 'admin_group', subject);
  if (showToken && settings.runners_token) json.runners_token = settings.runners_token;
  if (group.parentId === null)
    json.prevent_sharing_groups_outside_hierarchy = settings.prevent_sharing_groups_outside_hierarchy;
  const project = (view: ProjectView) => presentProject(view, { externalUrl, caller });
  if (details.projects) json.projects = details.projects.map(project);
  if (details.sharedProjects) json.shared_projects = details.sharedProjects.map(project);
  return json;
}
