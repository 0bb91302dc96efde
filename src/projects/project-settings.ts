/**
 * The project settings a caller can set, with GitLab's defaults. Stored in `projects.settings` and read back through `projectSettings()`.
 */
export const PROJECT_SETTING_DEFAULTS = {
  issues_enabled: true,
  merge_requests_enabled: true,
  jobs_enabled: true,
  wiki_enabled: true,
  snippets_enabled: true,
  packages_enabled: true,
  lfs_enabled: true,
  request_access_enabled: true,
  printing_merge_requests_link_enabled: true,
  container_registry_access_level: 'enabled' as 'enabled' | 'private' | 'disabled',
  auto_devops_enabled: false,
  auto_devops_deploy_strategy: 'continuous' as 'continuous' | 'manual' | 'timed_incremental',
  autoclose_referenced_issues: true,
  resolve_outdated_diff_discussions: false,
  only_allow_merge_if_pipeline_succeeds: false,
  allow_merge_on_skipped_pipeline: false,
  only_allow_merge_if_all_discussions_are_resolved: false,
  remove_source_branch_after_merge: true,
  merge_method: 'merge' as 'merge' | 'rebase_merge' | 'ff',
  squash_option: 'default_off' as 'never' | 'always' | 'default_on' | 'default_off',
  merge_commit_template: null as string | null,
  squash_commit_template: null as string | null,
  issue_branch_template: null as string | null,
  suggestion_commit_message: null as string | null,
  shared_runners_enabled: true,
  group_runners_enabled: true,
  public_jobs: true,
  ci_config_path: null as string | null,
  build_timeout: 3600,
  ci_default_git_depth: 20,
  ci_forward_deployment_enabled: true,
  ci_separated_caches: true,
  allow_pipeline_trigger_approve_deployment: false,
  warn_about_potentially_unwanted_characters: true,
  enforce_auth_checks_on_uploads: true,
  forking_access_level: 'enabled' as 'enabled' | 'private' | 'disabled',
  /** Forks only: merge requests target the fork itself rather than its upstream. */
  mr_default_target_self: false,
};

export type ProjectSettings = typeof PROJECT_SETTING_DEFAULTS;
export type ProjectSettingKey = keyof ProjectSettings;

export const PROJECT_SETTING_KEYS = Object.keys(PROJECT_SETTING_DEFAULTS) as ProjectSettingKey[];

export function projectSettings(stored: Partial<ProjectSettings>): ProjectSettings {
  return { ...PROJECT_SETTING_DEFAULTS, ...stored };
}

/** Picks the settings out of validated parameters; `container_registry_enabled` maps to the access level. */
export function settingsFromParams(params: Record<string, unknown>): Partial<ProjectSettings> {
  const settings: Record<string, unknown> = {};
  for (const key of PROJECT_SETTING_KEYS) {
    if (params[key] !== undefined) settings[key] = params[key];
  }
  if (
    params.container_registry_enabled !== undefined &&
    params.container_registry_access_level === undefined
  ) {
    settings.container_registry_access_level = params.container_registry_enabled ? 'enabled' : 'disabled';
  }
  return settings as Partial<ProjectSettings>;
}
