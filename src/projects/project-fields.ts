/**
 * The parts a project's representation is composed of, each the fields of one concern. Fields another
 * family keeps come through the `projectFields` extension point (project-attributes.ts), loaded with
 * the view; a part here reads only the project, its settings and the caller.
 */
import type { components } from '../../generated/openapi.js';
import { isAdmin } from '../core/abilities.js';
import { canAdminProject } from './abilities.js';
import { canCreateMergeRequestIn } from '../merge_requests/abilities.js';
import type { Caller } from '../core/auth.js';
import type { DetectedLicense } from '../git/license.js';
import { presentUserSummary } from '../users/user.presenter.js';
import { presentCustomAttribute } from './custom-attribute.presenter.js';
import type { ProjectSettings } from './project-settings.js';
import type { ProjectView } from './projects.service.js';

type Schemas = components['schemas'];
export type ProjectJson = Schemas['Project'];
export type ProjectSimpleJson = Schemas['ProjectSimple'];

export interface PresentOptions {
  externalUrl: string;
  caller: Caller;
  /** `permissions` is part of the single-project response only. */
  withPermissions?: boolean;
  /** Asked for `license`: what the repository holds (null for no license file). */
  license?: DetectedLicense | null;
}

/** What every part reads. */
export interface PartInput {
  view: ProjectView;
  settings: ProjectSettings;
  options: PresentOptions;
  /** `<namespace>/<project>`. */
  fullPath: string;
}

/** One part of the representation: the fields of one concern (absent ones are left out). */
export type ProjectFieldsPart = (input: PartInput) => Partial<ProjectJson>;

const accessLevel = (enabled: boolean) => (enabled ? 'enabled' : 'disabled');

/** `-/blob/<ref>/<path>` with each segment escaped: a branch may hold `[`, `#` or non-ASCII letters. */
export const blobPath = (ref: string | null, file: string) =>
  `-/blob/${[...String(ref).split('/'), ...file.split('/')].map(encodeURIComponent).join('/')}`;

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** Paragraphs of the description, escaped. Full Markdown rendering comes with the Markdown API. */
function descriptionHtml(description: string | null): string {
  if (!description) return '';
  return description
    .split(/\n{2,}/)
    .map((paragraph) => `<p dir="auto">${escapeHtml(paragraph).replace(/\n/g, '<br>')}</p>`)
    .join('\n');
}

/** The project itself: links, state, import, sharing, deletion, and the features forge-api leaves off. */
const generalFields: ProjectFieldsPart = ({ view, settings, options }) => {
  const { project } = view;
  const self = `${options.externalUrl}/api/v4/projects/${project.id}`;
  return {
    description_html: descriptionHtml(project.description),
    _links: {
      self,
      issues: `${self}/issues`,
      merge_requests: `${self}/merge_requests`,
      repo_branches: `${self}/repository/branches`,
      labels: `${self}/labels`,
      events: `${self}/events`,
      members: `${self}/members`,
      cluster_agents: `${self}/cluster_agents`,
    },
    empty_repo: project.repositoryEmpty,
    archived: project.archived,
    resolve_outdated_diff_discussions: settings.resolve_outdated_diff_discussions,
    repository_object_format: 'sha1',
    service_desk_enabled: false,
    emails_disabled: false,
    emails_enabled: true,
    creator_id: project.creatorId ?? 0,
    import_status: project.importStatus as ProjectJson['import_status'],
    open_issues_count: 0,
    updated_at: project.updatedAt.toISOString(),
    shared_with_groups: (view.sharedWithGroups ?? []).map((link) => ({
      group_id: link.groupId,
      group_name: link.group!.name,
      group_full_path: link.group!.fullPath,
      group_access_level: link.groupAccess as Schemas['ProjectSharedGroup']['group_access_level'],
      expires_at: link.expiresAt,
    })),
    request_access_enabled: settings.request_access_enabled,
    issue_branch_template: settings.issue_branch_template,
    warn_about_potentially_unwanted_characters: settings.warn_about_potentially_unwanted_characters,
    autoclose_referenced_issues: settings.autoclose_referenced_issues,
    enforce_auth_checks_on_uploads: settings.enforce_auth_checks_on_uploads,
    mirror: false,
    external_authorization_classification_label: null,
    requirements_enabled: false,
    requirements_access_level: 'enabled',
    security_and_compliance_enabled: false,
    compliance_frameworks: [],
    issues_template: null,
    prevent_merge_without_jira_issue: false,
    duo_remote_flows_enabled: false,
    spp_repository_pipeline_access: false,
    marked_for_deletion_at: project.markedForDeletionAt?.toISOString().slice(0, 10) ?? null,
    marked_for_deletion_on: project.markedForDeletionAt?.toISOString().slice(0, 10) ?? null,
    secret_push_protection_enabled: false,
  };
};

/** Which features are on, and for whom. */
const featureFields: ProjectFieldsPart = ({ view, settings, options }) => ({
  issues_enabled: settings.issues_enabled,
  merge_requests_enabled: settings.merge_requests_enabled,
  wiki_enabled: settings.wiki_enabled,
  jobs_enabled: settings.jobs_enabled,
  snippets_enabled: settings.snippets_enabled,
  can_create_merge_request_in: canCreateMergeRequestIn(options.caller, view.accessLevel),
  issues_access_level: accessLevel(settings.issues_enabled),
  repository_access_level: 'enabled',
  merge_requests_access_level: accessLevel(settings.merge_requests_enabled),
  forking_access_level: settings.forking_access_level,
  wiki_access_level: accessLevel(settings.wiki_enabled),
  builds_access_level: accessLevel(settings.jobs_enabled),
  snippets_access_level: accessLevel(settings.snippets_enabled),
  pages_access_level: 'private',
  analytics_access_level: 'enabled',
  security_and_compliance_access_level: 'private',
  releases_access_level: 'enabled',
  environments_access_level: 'enabled',
  feature_flags_access_level: 'enabled',
  infrastructure_access_level: 'enabled',
  monitor_access_level: 'enabled',
  model_experiments_access_level: 'enabled',
  model_registry_access_level: 'enabled',
});

/** CI/CD settings. */
const ciFields: ProjectFieldsPart = ({ settings }) => ({
  shared_runners_enabled: settings.shared_runners_enabled,
  ci_default_git_depth: settings.ci_default_git_depth,
  ci_forward_deployment_enabled: settings.ci_forward_deployment_enabled,
  ci_forward_deployment_rollback_allowed: true,
  ci_job_token_scope_enabled: false,
  ci_separated_caches: settings.ci_separated_caches,
  ci_allow_fork_pipelines_to_run_in_parent_project: true,
  ci_id_token_sub_claim_components: ['project_path', 'ref_type', 'ref'],
  build_git_strategy: 'fetch',
  keep_latest_artifact: true,
  restrict_user_defined_variables: false,
  ci_pipeline_variables_minimum_override_role: 'developer',
  runner_token_expiration_interval: null,
  group_runners_enabled: settings.group_runners_enabled,
  auto_cancel_pending_pipelines: 'enabled',
  build_timeout: settings.build_timeout,
  auto_devops_enabled: settings.auto_devops_enabled,
  auto_devops_deploy_strategy: settings.auto_devops_deploy_strategy,
  ci_push_repository_for_job_token_allowed: false,
  ci_config_path: settings.ci_config_path,
  public_jobs: settings.public_jobs,
  max_artifacts_size: null,
  allow_pipeline_trigger_approve_deployment: settings.allow_pipeline_trigger_approve_deployment,
  ci_restrict_pipeline_cancellation_role: 'developer',
});

/** How merge requests merge. */
const mergeRequestFields: ProjectFieldsPart = ({ settings }) => ({
  only_allow_merge_if_pipeline_succeeds: settings.only_allow_merge_if_pipeline_succeeds,
  allow_merge_on_skipped_pipeline: settings.allow_merge_on_skipped_pipeline,
  only_allow_merge_if_all_discussions_are_resolved: settings.only_allow_merge_if_all_discussions_are_resolved,
  remove_source_branch_after_merge: settings.remove_source_branch_after_merge,
  printing_merge_requests_link_enabled: settings.printing_merge_requests_link_enabled,
  merge_method: settings.merge_method,
  merge_request_title_regex: null,
  squash_option: settings.squash_option,
  suggestion_commit_message: settings.suggestion_commit_message,
  merge_commit_template: settings.merge_commit_template,
  squash_commit_template: settings.squash_commit_template,
  // The approvals family shows its own through `projectFields` where approvals exist.
  approvals_before_merge: 0,
  merge_requests_template: null,
  merge_pipelines_enabled: false,
  merge_trains_enabled: false,
  merge_trains_skip_train_allowed: false,
  only_allow_merge_if_all_status_checks_passed: false,
});

/** The container registry, packages and LFS. */
const registryFields: ProjectFieldsPart = ({ settings, options, fullPath }) => ({
  container_registry_image_prefix: `${new URL(options.externalUrl).host}/${fullPath}`.toLowerCase(),
  container_registry_enabled: settings.container_registry_access_level !== 'disabled',
  container_registry_access_level: settings.container_registry_access_level,
  lfs_enabled: settings.lfs_enabled,
  packages_enabled: settings.packages_enabled,
  container_expiration_policy: {
    cadence: '1d',
    enabled: false,
    keep_n: 10,
    older_than: '90d',
    name_regex: '.*',
    name_regex_delete: '.*',
    name_regex_keep: null,
    next_run_at: null,
  },
});

/** Who owns a personal project, and what its administrators and instance administrators see. */
const ownerAndAdminFields: ProjectFieldsPart = ({ view, options }) => {
  const { project } = view;
  const { caller, externalUrl } = options;
  const owner = project.namespace.kind === 'user' ? project.namespace.owner : null;
  const fields: Partial<ProjectJson> = {};
  if (owner)
    fields.owner = { ...presentUserSummary(owner, externalUrl), created_at: owner.createdAt.toISOString() };
  if (canAdminProject(caller, view.accessLevel)) {
    fields.runners_token = project.runnersToken;
    fields.import_url = null;
    fields.import_type = project.importType;
    fields.import_error = null;
  }
  if (isAdmin(caller)) fields.repository_storage = project.repositoryStorage;
  return fields;
};

/** The caller's own access (single reads only). Notification level 3 is "global", the default until notification settings exist. */
const permissionFields: ProjectFieldsPart = ({ view, options }) => {
  if (!options.withPermissions || !options.caller.user) return {};
  type Access = NonNullable<Schemas['ProjectAccess']>;
  const access = (level: number | undefined): Access | null =>
    level ? { access_level: level as Access['access_level'], notification_level: 3 } : null;
  return {
    permissions: { project_access: access(view.projectAccess), group_access: access(view.groupAccess) },
  };
};

/** The license the repository holds, when asked for. */
const licenseFields: ProjectFieldsPart = ({ view, options, fullPath }) => {
  if (options.license === undefined) return {};
  const found = options.license;
  return {
    license_url: found
      ? `${options.externalUrl}/${fullPath}/${blobPath(view.project.defaultBranch, found.path)}`
      : null,
    license: found
      ? {
          key: found.key,
          name: found.name,
          nickname: found.nickname,
          html_url: found.html_url,
          source_url: found.source_url,
        }
      : null,
  };
};

/** Custom attributes (administrators) and statistics (when asked for and allowed). */
const attributeAndStatisticsFields: ProjectFieldsPart = ({ view }) => {
  const fields: Partial<ProjectJson> = {};
  if (view.customAttributes) fields.custom_attributes = view.customAttributes.map(presentCustomAttribute);
  const s = view.project.statistics;
  if (view.showStatistics && s)
    fields.statistics = {
      commit_count: s.commitCount,
      storage_size: s.storageSize,
      repository_size: s.repositorySize,
      wiki_size: s.wikiSize,
      lfs_objects_size: s.lfsObjectsSize,
      job_artifacts_size: s.jobArtifactsSize,
      pipeline_artifacts_size: s.pipelineArtifactsSize,
      packages_size: s.packagesSize,
      snippets_size: s.snippetsSize,
      uploads_size: s.uploadsSize,
      container_registry_size: s.containerRegistrySize,
    };
  return fields;
};

/** The parts of every full representation, in order; a fork's part and contributed fields follow. */
export const PROJECT_FIELD_PARTS: readonly ProjectFieldsPart[] = [
  generalFields,
  featureFields,
  ciFields,
  mergeRequestFields,
  registryFields,
  ownerAndAdminFields,
  permissionFields,
  licenseFields,
  attributeAndStatisticsFields,
];
