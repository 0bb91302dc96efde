import type { components } from '../../generated/openapi.js';
import { isAdmin, visibilityName } from '../core/abilities.js';
import { canAdminProject } from './abilities.js';
import { canCreateMergeRequestIn } from '../merge_requests/abilities.js';
import type { Caller } from '../core/auth.js';
import { presentNamespaceSummary } from '../namespaces/namespace.presenter.js';
import { presentUserSummary } from '../users/user.presenter.js';
import { presentCustomAttribute } from './custom-attribute.presenter.js';
import { projectSettings } from './project-settings.js';
import type { DetectedLicense } from '../git/license.js';
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

const accessLevel = (enabled: boolean) => (enabled ? 'enabled' : 'disabled');
/** `-/blob/<ref>/<path>` with each segment escaped: a branch may hold `[`, `#` or non-ASCII letters. */
const blobPath = (ref: string | null, file: string) =>
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

/** `<external URL>/<namespace>/<project>`: the project's page, and the base of its commit and file URLs. */
export const projectWebUrl = (view: ProjectView, externalUrl: string) =>
  `${externalUrl}/${view.project.namespace.fullPath}/${view.project.path}`;

function hostOf(externalUrl: string): string {
  return new URL(externalUrl).host;
}

/** The fields every caller may see, also the whole of `simple=true` and anonymous lists. */
export function presentProjectSimple({ project }: ProjectView, externalUrl: string): ProjectSimpleJson {
  const namespace = project.namespace;
  const fullPath = `${namespace.fullPath}/${project.path}`;
  return {
    id: project.id,
    description: project.description,
    name: project.name,
    name_with_namespace: `${namespace.fullName} / ${project.name}`,
    path: project.path,
    path_with_namespace: fullPath,
    created_at: project.createdAt.toISOString(),
    default_branch: project.defaultBranch,
    tag_list: project.topics,
    topics: project.topics,
    ssh_url_to_repo: `git@${new URL(externalUrl).hostname}:${fullPath}.git`,
    http_url_to_repo: `${externalUrl}/${fullPath}.git`,
    web_url: `${externalUrl}/${fullPath}`,
    readme_url: project.readmePath
      ? `${externalUrl}/${fullPath}/${blobPath(project.defaultBranch, project.readmePath)}`
      : null,
    forks_count: project.forksCount,
    avatar_url: null,
    star_count: project.starCount,
    last_activity_at: project.lastActivityAt.toISOString(),
    visibility: visibilityName(project.visibilityLevel),
    namespace: presentNamespaceSummary(namespace, externalUrl),
  };
}

export function presentProject(view: ProjectView, options: PresentOptions): ProjectJson {
  const { project, accessLevel: level } = view;
  const { externalUrl, caller } = options;
  const settings = projectSettings(project.settings);
  const simple = presentProjectSimple(view, externalUrl);
  const self = `${externalUrl}/api/v4/projects/${project.id}`;
  const owner = project.namespace.kind === 'user' ? project.namespace.owner : null;

  // Object.assign, not a leading spread: V8 builds a literal that starts with a spread and goes on for a
  // hundred properties some twenty times slower.
  const details: Omit<ProjectJson, keyof ProjectSimpleJson> = {
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
    container_registry_image_prefix: `${hostOf(externalUrl)}/${simple.path_with_namespace}`.toLowerCase(),
    // Until the repository issue lands, no project has commits.
    empty_repo: project.repositoryEmpty,
    archived: project.archived,
    resolve_outdated_diff_discussions: settings.resolve_outdated_diff_discussions,
    repository_object_format: 'sha1',
    issues_enabled: settings.issues_enabled,
    merge_requests_enabled: settings.merge_requests_enabled,
    wiki_enabled: settings.wiki_enabled,
    jobs_enabled: settings.jobs_enabled,
    snippets_enabled: settings.snippets_enabled,
    container_registry_enabled: settings.container_registry_access_level !== 'disabled',
    service_desk_enabled: false,
    can_create_merge_request_in: canCreateMergeRequestIn(caller, level),
    issues_access_level: accessLevel(settings.issues_enabled),
    repository_access_level: 'enabled',
    merge_requests_access_level: accessLevel(settings.merge_requests_enabled),
    forking_access_level: settings.forking_access_level,
    wiki_access_level: accessLevel(settings.wiki_enabled),
    builds_access_level: accessLevel(settings.jobs_enabled),
    snippets_access_level: accessLevel(settings.snippets_enabled),
    pages_access_level: 'private',
    analytics_access_level: 'enabled',
    container_registry_access_level: settings.container_registry_access_level,
    security_and_compliance_access_level: 'private',
    releases_access_level: 'enabled',
    environments_access_level: 'enabled',
    feature_flags_access_level: 'enabled',
    infrastructure_access_level: 'enabled',
    monitor_access_level: 'enabled',
    model_experiments_access_level: 'enabled',
    model_registry_access_level: 'enabled',
    emails_disabled: false,
    emails_enabled: true,
    shared_runners_enabled: settings.shared_runners_enabled,
    lfs_enabled: settings.lfs_enabled,
    creator_id: project.creatorId ?? 0,
    import_status: project.importStatus as ProjectJson['import_status'],
    open_issues_count: 0,
    updated_at: project.updatedAt.toISOString(),
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
    shared_with_groups: (view.sharedWithGroups ?? []).map((link) => ({
      group_id: link.groupId,
      group_name: link.group!.name,
      group_full_path: link.group!.fullPath,
      group_access_level: link.groupAccess as Schemas['ProjectSharedGroup']['group_access_level'],
      expires_at: link.expiresAt,
    })),
    only_allow_merge_if_pipeline_succeeds: settings.only_allow_merge_if_pipeline_succeeds,
    allow_merge_on_skipped_pipeline: settings.allow_merge_on_skipped_pipeline,
    request_access_enabled: settings.request_access_enabled,
    only_allow_merge_if_all_discussions_are_resolved:
      settings.only_allow_merge_if_all_discussions_are_resolved,
    remove_source_branch_after_merge: settings.remove_source_branch_after_merge,
    printing_merge_requests_link_enabled: settings.printing_merge_requests_link_enabled,
    merge_method: settings.merge_method,
    merge_request_title_regex: null,
    squash_option: settings.squash_option,
    enforce_auth_checks_on_uploads: settings.enforce_auth_checks_on_uploads,
    suggestion_commit_message: settings.suggestion_commit_message,
    merge_commit_template: settings.merge_commit_template,
    squash_commit_template: settings.squash_commit_template,
    issue_branch_template: settings.issue_branch_template,
    warn_about_potentially_unwanted_characters: settings.warn_about_potentially_unwanted_characters,
    autoclose_referenced_issues: settings.autoclose_referenced_issues,
    max_artifacts_size: null,
    approvals_before_merge: 0,
    mirror: false,
    external_authorization_classification_label: null,
    requirements_enabled: false,
    requirements_access_level: 'enabled',
    security_and_compliance_enabled: false,
    compliance_frameworks: [],
    issues_template: null,
    merge_requests_template: null,
    merge_pipelines_enabled: false,
    merge_trains_enabled: false,
    merge_trains_skip_train_allowed: false,
    only_allow_merge_if_all_status_checks_passed: false,
    allow_pipeline_trigger_approve_deployment: settings.allow_pipeline_trigger_approve_deployment,
    prevent_merge_without_jira_issue: false,
    duo_remote_flows_enabled: false,
    spp_repository_pipeline_access: false,
    marked_for_deletion_at: project.markedForDeletionAt?.toISOString().slice(0, 10) ?? null,
    marked_for_deletion_on: project.markedForDeletionAt?.toISOString().slice(0, 10) ?? null,
    secret_push_protection_enabled: false,
    packages_enabled: settings.packages_enabled,
    ci_restrict_pipeline_cancellation_role: 'developer',
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
  };
  const json: ProjectJson = Object.assign(simple, details);

  if (owner) {
    json.owner = { ...presentUserSummary(owner, externalUrl), created_at: owner.createdAt.toISOString() };
  }
  if (canAdminProject(caller, level)) {
    json.runners_token = project.runnersToken;
    json.import_url = null;
    json.import_type = project.importType;
    json.import_error = null;
  }
  if (isAdmin(caller)) json.repository_storage = project.repositoryStorage;
  if (options.withPermissions && caller.user) {
    // Notification level 3 is "global", the default until notification settings exist.
    type Access = NonNullable<Schemas['ProjectAccess']>;
    const access = (level: number | undefined): Access | null =>
      level ? { access_level: level as Access['access_level'], notification_level: 3 } : null;
    json.permissions = { project_access: access(view.projectAccess), group_access: access(view.groupAccess) };
  }
  if (options.license !== undefined) {
    const found = options.license;
    json.license_url = found
      ? `${projectWebUrl(view, options.externalUrl)}/${blobPath(project.defaultBranch, found.path)}`
      : null;
    json.license = found
      ? {
          key: found.key,
          name: found.name,
          nickname: found.nickname,
          html_url: found.html_url,
          source_url: found.source_url,
        }
      : null;
  }
  if (project.forkedFromProjectId !== null) {
    json.mr_default_target_self = settings.mr_default_target_self;
    if (view.forkedFrom) json.forked_from_project = presentProjectSimple(view.forkedFrom, externalUrl);
  }
  if (view.customAttributes) json.custom_attributes = view.customAttributes.map(presentCustomAttribute);
  if (view.contributed) Object.assign(json, view.contributed);
  if (view.showStatistics && project.statistics) {
    const s = project.statistics;
    json.statistics = {
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
  }
  return json;
}
