/** The limits a plan holds, by their API names (also the table's columns), in GitLab's order. */
export const PLAN_LIMIT_NAMES = [
  'ci_instance_level_variables',
  'ci_pipeline_size',
  'ci_active_jobs',
  'ci_project_subscriptions',
  'ci_pipeline_schedules',
  'ci_needs_size_limit',
  'ci_registered_group_runners',
  'ci_registered_project_runners',
  'conan_max_file_size',
  'dotenv_size',
  'dotenv_variables',
  'enforcement_limit',
  'generic_packages_max_file_size',
  'helm_max_file_size',
  'maven_max_file_size',
  'notification_limit',
  'npm_max_file_size',
  'nuget_max_file_size',
  'pipeline_hierarchy_size',
  'pypi_max_file_size',
  'storage_size_limit',
  'terraform_module_max_file_size',
] as const;

export type PlanLimitName = (typeof PLAN_LIMIT_NAMES)[number];

/** A plan's limits: counts (0 for no limit), sizes in bytes or MiB. */
export type PlanLimits = Record<PlanLimitName, number>;
