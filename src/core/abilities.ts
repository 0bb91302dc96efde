/**
 * Every "may this caller do X to Y" question, answered in one place.
 *
 * A subject (project or group) is described by its visibility and the caller's access level to it.
 * Reading depends on visibility; every other ability needs a minimum role. `authorize` turns a refusal
 * into GitLab's answer: 404 naming the resource when the caller may not even see it, 403 otherwise.
 */
import type { EntityManager, SelectQueryBuilder, ObjectLiteral } from 'typeorm';
import type { Caller } from './auth.js';
import { forbidden, notFound, unauthorized } from './errors.js';
import { AccessLevel } from './access-level.js';

export const Visibility = { private: 0, internal: 10, public: 20 } as const;
export type VisibilityName = keyof typeof Visibility;

export const visibilityName = (level: number): VisibilityName =>
  level >= Visibility.public ? 'public' : level >= Visibility.internal ? 'internal' : 'private';

export const isAdmin = (caller: Caller) => caller.user?.admin === true;

/** The role each project ability needs, beyond being able to see the project. */
const PROJECT_ABILITIES = {
  read_project: AccessLevel.NoAccess,
  read_project_member: AccessLevel.NoAccess,
  read_statistics: AccessLevel.Reporter,
  /**
   * Being the target of a merge request (`can_create_merge_request_in`): GitLab's guest access with
   * download rights, so whoever reads a public or internal project's code, or Reporter and above.
   */
  create_merge_request_in: AccessLevel.Reporter,
  /** Opening a merge request from the project's branches (GitLab's `create_merge_request_from`). */
  create_merge_request_from: AccessLevel.Developer,
  /** Reading merge requests: like code, open to whoever sees a public or internal project. */
  read_merge_request: AccessLevel.Reporter,
  /** Time tracking and the other changes GitLab's `admin_merge_request` covers. */
  admin_merge_request: AccessLevel.Developer,
  destroy_merge_request: AccessLevel.Owner,
  /** Merging a merge request: Developer and above; the target branch's protection refines it (merge levels). */
  merge_merge_request: AccessLevel.Developer,
  /** Commenting on what the caller may read (merge requests): signed-in users, as reading allows. */
  create_note: AccessLevel.Reporter,
  /** Reacting with emoji: as commenting (GitLab enables `award_emoji` with `create_note`). */
  award_emoji: AccessLevel.Reporter,
  /** Writing and reading internal notes. */
  read_internal_note: AccessLevel.Reporter,
  /** Resolving threads, beyond the merge request's author (GitLab's `resolve_note`). */
  resolve_note: AccessLevel.Developer,
  /** Deleting others' notes (GitLab's `admin_note` beyond a note's author). */
  admin_note: AccessLevel.Maintainer,
  read_code: AccessLevel.Reporter,
  /** Forking reads the code; the project's `forking_access_level` refines it (`canUseForking`). */
  fork_project: AccessLevel.Reporter,
  /** Uploading files for Markdown: members, and any signed-in user who sees a public or internal project. */
  upload_file: AccessLevel.Guest,
  /** Listing and deleting a project's uploads. */
  admin_upload: AccessLevel.Maintainer,
  /** Removing the project's fork relation. */
  remove_fork_project: AccessLevel.Owner,
  push_code: AccessLevel.Developer,
  admin_project: AccessLevel.Maintainer,
  admin_project_member: AccessLevel.Maintainer,
  /** Giving, changing or taking the Owner role in a project. */
  manage_owners: AccessLevel.Owner,
  admin_protected_branch: AccessLevel.Maintainer,
  /** Remote (push) mirrors family: managing and forcing push mirrors (GitLab's `admin_remote_mirror`). */
  admin_remote_mirror: AccessLevel.Maintainer,
  /** Labels and milestones: whoever sees the project reads them; Planner and above manage them. */
  read_label: AccessLevel.NoAccess,
  admin_label: AccessLevel.Planner,
  read_milestone: AccessLevel.NoAccess,
  admin_milestone: AccessLevel.Planner,
  admin_project_access_token: AccessLevel.Maintainer,
  share_project: AccessLevel.Maintainer,
  archive_project: AccessLevel.Owner,
  change_visibility_level: AccessLevel.Owner,
  remove_project: AccessLevel.Owner,
  // --- snippets family ---
  /** Project snippets: whoever sees the project; each snippet's visibility refines it (canReadSnippet). */
  read_snippet: AccessLevel.NoAccess,
  /** Creating project snippets; editing and deleting them is for their author or Maintainer and above. */
  create_snippet: AccessLevel.Reporter,
  admin_snippet: AccessLevel.Maintainer,
  // --- merge_request_approvals family ---
  /**
   * Approving merge requests: Developer and above (GitLab's `approve_merge_request`); a custom role's
   * `admin_merge_request` grants this ability by name. Eligibility (author, committers) is the service's.
   */
  approve_merge_request: AccessLevel.Developer,
  // --- Cluster agents and feature flags (cluster_agents, feature_flags families) ---
  /** Agents and their tokens: Developer reads them; Maintainer registers, removes and issues tokens. */
  read_cluster_agent: AccessLevel.Developer,
  admin_cluster: AccessLevel.Maintainer,
  /** Feature flags and user lists: Developer and above read and manage them (GitLab's `*_feature_flag`). */
  read_feature_flag: AccessLevel.Developer,
  admin_feature_flag: AccessLevel.Developer,
  admin_feature_flags_user_lists: AccessLevel.Developer,
  // member_roles / push_rules family
  admin_push_rules: AccessLevel.Maintainer,
  // --- declared truthfully (issue 24): abilities the services enforced without a name ---
  /** Editing a merge request beyond its author (GitLab's `update_merge_request`); no custom role grants it. */
  update_merge_request: AccessLevel.Developer,
} as const;

/** The role each group ability needs, beyond being able to see the group. */
const GROUP_ABILITIES = {
  read_group: AccessLevel.NoAccess,
  read_group_member: AccessLevel.NoAccess,
  /** Subgroups and projects: the group's creation levels refine these (see groups service). */
  create_subgroup: AccessLevel.Maintainer,
  create_projects: AccessLevel.Developer,
  read_label: AccessLevel.NoAccess,
  admin_label: AccessLevel.Planner,
  read_milestone: AccessLevel.NoAccess,
  admin_milestone: AccessLevel.Planner,
  admin_group: AccessLevel.Owner,
  admin_group_member: AccessLevel.Owner,
  admin_group_access_token: AccessLevel.Owner,
  remove_group: AccessLevel.Owner,
  // member_roles family
  admin_member_role: AccessLevel.Owner,
} as const;

export type ProjectAbility = keyof typeof PROJECT_ABILITIES;
export type GroupAbility = keyof typeof GROUP_ABILITIES;

// ---- member_roles family: what custom roles grant ------------------------------------------------------

/** The permission flags of a custom member role, in GitLab's order. */
export const MEMBER_ROLE_PERMISSIONS = [
  'admin_cicd_variables',
  'admin_compliance_framework',
  'admin_group_member',
  'admin_merge_request',
  'admin_push_rules',
  'admin_terraform_state',
  'admin_vulnerability',
  'admin_web_hook',
  'archive_project',
  'manage_deploy_tokens',
  'manage_group_access_tokens',
  'manage_merge_request_settings',
  'manage_project_access_tokens',
  'manage_security_policy_link',
  'read_code',
  'read_runners',
  'read_dependency',
  'read_vulnerability',
  'remove_group',
  'remove_project',
] as const;

export type MemberRolePermission = (typeof MEMBER_ROLE_PERMISSIONS)[number];

/**
 * The abilities each flag of a custom role opens, on projects and on groups, whatever the membership's
 * base level. The names are ability names, not checked against the tables above: a flag whose family
 * does not exist yet (CI/CD variables, runners, vulnerabilities, web hooks, deploy tokens, compliance,
 * Terraform state, security policies) names the ability that family will declare, and grants
 * it from the day it does.
 */
export const MEMBER_ROLE_GRANTS: Record<MemberRolePermission, { project?: string[]; group?: string[] }> = {
  admin_cicd_variables: { project: ['admin_cicd_variables'], group: ['admin_cicd_variables'] },
  admin_compliance_framework: {
    project: ['admin_compliance_framework'],
    group: ['admin_compliance_framework'],
  },
  admin_group_member: { group: ['admin_group_member'] },
  // GitLab's policy: the role reads, comments on (and reacts to), opens, administers and approves merge requests.
  admin_merge_request: {
    project: [
      'read_merge_request',
      'read_code',
      'create_note',
      'award_emoji',
      'create_merge_request_from',
      'admin_merge_request',
      'approve_merge_request',
    ],
  },
  admin_push_rules: { project: ['admin_push_rules'], group: ['admin_push_rules'] },
  admin_terraform_state: { project: ['admin_terraform_state'] },
  admin_vulnerability: {
    project: ['admin_vulnerability', 'read_vulnerability'],
    group: ['admin_vulnerability', 'read_vulnerability'],
  },
  admin_web_hook: { project: ['admin_web_hook'], group: ['admin_web_hook'] },
  archive_project: { project: ['archive_project'] },
  manage_deploy_tokens: { project: ['manage_deploy_tokens'], group: ['manage_deploy_tokens'] },
  manage_group_access_tokens: { group: ['admin_group_access_token'] },
  manage_merge_request_settings: { project: ['manage_merge_request_settings'] },
  manage_project_access_tokens: { project: ['admin_project_access_token'] },
  manage_security_policy_link: {
    project: ['manage_security_policy_link'],
    group: ['manage_security_policy_link'],
  },
  read_code: { project: ['read_code'] },
  read_runners: { project: ['read_runners'], group: ['read_runners'] },
  read_dependency: { project: ['read_dependency'], group: ['read_dependency'] },
  read_vulnerability: { project: ['read_vulnerability'], group: ['read_vulnerability'] },
  remove_group: { group: ['remove_group'] },
  remove_project: { project: ['remove_project'] },
};

const isMemberRolePermission = (name: string): name is MemberRolePermission => name in MEMBER_ROLE_GRANTS;

/** Does a custom role on the caller's memberships grant `ability` on a subject of this kind? */
function grantedByRole(subject: Subject, kind: 'project' | 'group', ability: string): boolean {
  return (subject.memberRolePermissions ?? []).some(
    (flag) => isMemberRolePermission(flag) && (MEMBER_ROLE_GRANTS[flag][kind] ?? []).includes(ability),
  );
}

/**
 * SQL for the enabled flags of the custom roles on the caller's active memberships of a project
 * (`projectSql` its id) or of the groups `traversalSql` lists, as a text array. `callerParam` holds the
 * user's id.
 */
export function memberRolePermissionsSql(callerParam: string, traversalSql: string, projectSql?: string) {
  const project = projectSql ? `(m.source_type = 'Project' AND m.source_id = ${projectSql}) OR ` : '';
  return `ARRAY(SELECT DISTINCT unnest(r.permissions) FROM members m
      JOIN member_roles r ON r.id = m.member_role_id
      WHERE m.user_id = ${callerParam} AND ${activeSql('m')}
        AND (${project}(m.source_type = 'Namespace' AND m.source_id = ANY(${traversalSql}))))`;
}
// ---- end of member_roles family ------------------------------------------------------------------------

/** What the abilities need to know about a project or group, as seen by one caller. */
export interface Subject {
  visibilityLevel: number;
  /** The caller's effective access level (0 for none). */
  accessLevel: number;
  /** Groups only: the caller belongs to something inside the group, which makes a private group visible. */
  hasDescendantAccess?: boolean;
  archived?: boolean;
  /** The flags of the custom roles the caller's memberships carry (see MEMBER_ROLE_GRANTS). */
  memberRolePermissions?: readonly string[];
}

/** Visibility alone: may the caller see the subject at all? */
export function canSee(caller: Caller, subject: Subject): boolean {
  if (subject.visibilityLevel >= Visibility.public) return true;
  const user = caller.user;
  if (!user) return false;
  if (user.admin || subject.accessLevel > 0 || subject.hasDescendantAccess) return true;
  return subject.visibilityLevel >= Visibility.internal && !user.external;
}

function canWith(
  caller: Caller,
  subject: Subject,
  needed: number,
  granted: { kind: 'project' | 'group'; ability: string },
): boolean {
  if (!canSee(caller, subject)) return false;
  if (needed === AccessLevel.NoAccess || isAdmin(caller)) return true;
  return subject.accessLevel >= needed || grantedByRole(subject, granted.kind, granted.ability);
}

/**
 * An archived project is read-only: its content (code, labels, milestones, new merge requests from or
 * into it) cannot change, though its settings and members can.
 */
const READ_ONLY_WHEN_ARCHIVED = new Set<ProjectAbility>([
  'push_code',
  'merge_merge_request',
  'admin_label',
  'admin_milestone',
  'create_merge_request_from',
  'create_merge_request_in',
  'create_snippet',
  'admin_snippet',
]);

export function canProject(caller: Caller, ability: ProjectAbility, subject: Subject): boolean {
  if (subject.archived && READ_ONLY_WHEN_ARCHIVED.has(ability)) return false;
  // Public and internal code is readable (and forkable) by whoever may see the project, and so are its
  // merge requests and their comments; private code needs Reporter.
  if (
    (ability === 'read_code' ||
      ability === 'fork_project' ||
      ability === 'read_merge_request' ||
      ability === 'create_note' ||
      ability === 'award_emoji') &&
    subject.visibilityLevel >= Visibility.internal
  )
    return canSee(caller, subject);
  if (
    (ability === 'upload_file' || ability === 'create_merge_request_in') &&
    subject.visibilityLevel >= Visibility.internal
  )
    return caller.user !== null && canSee(caller, subject);
  return canWith(caller, subject, PROJECT_ABILITIES[ability], { kind: 'project', ability });
}

export function canGroup(caller: Caller, ability: GroupAbility, subject: Subject): boolean {
  return canWith(caller, subject, GROUP_ABILITIES[ability], { kind: 'group', ability });
}

/** Throws 404 (naming the resource) when the caller cannot see the project, 403 when the ability is missing. */
export function authorizeProject(caller: Caller, ability: ProjectAbility, subject: Subject): void {
  if (!canSee(caller, subject)) throw notFound('Project');
  if (!canProject(caller, ability, subject)) throw forbidden();
}

export function authorizeGroup(caller: Caller, ability: GroupAbility, subject: Subject): void {
  if (!canSee(caller, subject)) throw notFound('Group');
  if (!canGroup(caller, ability, subject)) throw forbidden();
}

/** A project ability of a caller whose level is known, visibility aside (the project is already seen). */
const hasLevelFor = (caller: Caller, ability: ProjectAbility, accessLevel: number) =>
  isAdmin(caller) || accessLevel >= PROJECT_ABILITIES[ability];

/** Reporter and above, or an administrator. */
export const canReadStatistics = (caller: Caller, accessLevel: number) =>
  hasLevelFor(caller, 'read_statistics', accessLevel);

/** Maintainer and above, or an administrator. */
export const canAdminProject = (caller: Caller, accessLevel: number) =>
  hasLevelFor(caller, 'admin_project', accessLevel);

export const canCreateMergeRequestIn = (caller: Caller, accessLevel: number) =>
  hasLevelFor(caller, 'create_merge_request_in', accessLevel);

/** Editing a merge request: its author, or Developer and above (GitLab's `update_merge_request`). */
export const canUpdateMergeRequest = (caller: Caller, accessLevel: number, authorId: number | null) =>
  (caller.user !== null && caller.user.id === authorId) ||
  hasLevelFor(caller, 'admin_merge_request', accessLevel);

/**
 * Commenting on a merge request whose discussion is locked: project members only (any role), or an
 * administrator, as GitLab's lock allows.
 */
export const canCommentWhenLocked = (caller: Caller, accessLevel: number) =>
  caller.user !== null && (isAdmin(caller) || isMemberLevel(accessLevel));

/** Removing an emoji reaction: the user who awarded it, or an administrator. */
export const canRemoveAward = (caller: Caller, awarderId: number | null) =>
  caller.user !== null && (caller.user.id === awarderId || isAdmin(caller));

/** Internal notes: Reporter and above, or an administrator. */
export const canReadInternalNotes = (caller: Caller, accessLevel: number) =>
  hasLevelFor(caller, 'read_internal_note', accessLevel);

/** Editing a note: its author only. */
export const canEditNote = (caller: Caller, authorId: number | null) =>
  caller.user !== null && caller.user.id === authorId;

/** Deleting a note: its author, or Maintainer and above, or an administrator. */
export const canDeleteNote = (caller: Caller, accessLevel: number, authorId: number | null) =>
  canEditNote(caller, authorId) || (caller.user !== null && hasLevelFor(caller, 'admin_note', accessLevel));

/** Resolving a thread: the merge request's author, or Developer and above, or an administrator. */
export const canResolveDiscussion = (
  caller: Caller,
  accessLevel: number,
  mergeRequestAuthorId: number | null,
) =>
  caller.user !== null &&
  (caller.user.id === mergeRequestAuthorId || hasLevelFor(caller, 'resolve_note', accessLevel));

/**
 * GitLab's collaboration on a fork's merge request (`branch_allows_collaboration?`): one who may merge
 * into the target branch may push to the source branch of an open merge request from a fork that allows
 * it, while both projects are public or internal and the source branch is unprotected in the fork
 * (`collaborative_push_possible?`). The facts come from the push rules, which read them.
 */
export const canPushAsCollaborator = (
  caller: Caller,
  mr: {
    open: boolean;
    allowCollaboration: boolean;
    sourceVisibility: number;
    targetVisibility: number;
    sourceBranchProtected: boolean;
    mayMergeTarget: boolean;
  },
) =>
  caller.user !== null &&
  mr.open &&
  mr.allowCollaboration &&
  mr.sourceVisibility > Visibility.private &&
  mr.targetVisibility > Visibility.private &&
  !mr.sourceBranchProtected &&
  mr.mayMergeTarget;

/** Pushing code (and merging into an unprotected branch): Developer and above, or an administrator. */
export const canPushCode = (caller: Caller, accessLevel: number) =>
  caller.user !== null && hasLevelFor(caller, 'push_code', accessLevel);

/** Asking for a merge status recheck: Developer and above (`restrict_merge_status_recheck`). */
export const canRecheckMergeStatus = (caller: Caller, accessLevel: number) =>
  hasLevelFor(caller, 'admin_merge_request', accessLevel);

/** Deleting a protected branch or tag: Maintainer and above, or an administrator. */
export const canAdminProtectedRefs = (caller: Caller, accessLevel: number) =>
  hasLevelFor(caller, 'admin_protected_branch', accessLevel);

/**
 * A project's forking feature (`forking_access_level`): `enabled` for whoever may fork the code,
 * `private` for members (and administrators), `disabled` for nobody, as GitLab's feature levels go.
 */
export function canUseForking(
  caller: Caller,
  level: 'enabled' | 'private' | 'disabled',
  accessLevel: number,
) {
  if (level === 'disabled') return false;
  return level === 'enabled' || isAdmin(caller) || isMemberLevel(accessLevel);
}

// --- snippets family ---
/**
 * Reading one snippet, its project (if any) already seen: administrators and its author always; public
 * ones anyone; internal ones signed-in users who are not external (and members of its project);
 * private ones its project's members, or for a personal snippet its author alone.
 */
export function canReadSnippet(
  caller: Caller,
  snippet: { visibilityLevel: number; authorId: number; projectId: number | null },
  projectAccessLevel: number,
): boolean {
  const user = caller.user;
  if (snippet.visibilityLevel >= Visibility.public) return true;
  if (!user) return false;
  if (user.admin || user.id === snippet.authorId) return true;
  const member = snippet.projectId !== null && isMemberLevel(projectAccessLevel);
  if (snippet.visibilityLevel >= Visibility.internal) return !user.external || member;
  return member;
}

/** Editing or deleting a snippet: its author, Maintainer and above of its project, or an administrator. */
export const canAdminSnippet = (
  caller: Caller,
  snippet: { authorId: number; projectId: number | null },
  projectAccessLevel: number,
) =>
  caller.user !== null &&
  (caller.user.id === snippet.authorId ||
    isAdmin(caller) ||
    (snippet.projectId !== null && hasLevelFor(caller, 'admin_snippet', projectAccessLevel)));

/** A snippet's user agent details: administrators only. */
export const canReadUserAgentDetail = (caller: Caller) => isAdmin(caller);

/** Does a level meet an access-level entry's role (a protected branch's or tag's `access_level`)? */
export const meetsAccessLevel = (accessLevel: number, required: number) => accessLevel >= required;

/** A group named in a protection entry admits its members at Developer and above. */
export const groupEntryAdmits = (groupAccessLevel: number) =>
  meetsAccessLevel(groupAccessLevel, AccessLevel.Developer);

/** Any membership at all (a level above none). */
export const isMemberLevel = (accessLevel: number) => accessLevel > AccessLevel.NoAccess;

/**
 * Whether a caller may give a level (a token's, a role's) on a subject: an administrator any, others
 * none above their own.
 */
export const mayGrantLevel = (caller: Caller, subject: Subject, level: number) =>
  isAdmin(caller) || level <= subject.accessLevel;

/**
 * The one definition of an active membership or share: unexpired today. `alias` is the members (or
 * project_group_links) table's alias in the query.
 */
export const activeSql = (alias: string) =>
  `(${alias}.expires_at IS NULL OR ${alias}.expires_at > current_date)`;

const ACTIVE_MEMBER = activeSql('m');
const ACTIVE_LINK = activeSql('l');

/**
 * SQL true when the caller (`:callerId`) is a member of the project: directly, through its namespace
 * or an ancestor, or through a group the project is shared with. With `withMinimum`, only at
 * `:minAccess` or above (a share caps its members at the share's level). The subqueries do not depend
 * on the row, so PostgreSQL computes each once per query instead of once per project.
 */
export function projectMembershipSql(
  projectAlias: string,
  namespaceAlias: string,
  withMinimum = false,
): string {
  const minimum = (level: string) => (withMinimum ? ` AND ${level} >= :minAccess` : '');
  const memberships = (type: string) => `SELECT m.source_id FROM members m
      WHERE m.user_id = :callerId AND m.source_type = '${type}' AND ${ACTIVE_MEMBER}${minimum('m.access_level')}`;
  return `(${projectAlias}.id IN (${memberships('Project')})
    OR ${namespaceAlias}.traversal_ids && ARRAY(${memberships('Namespace')})
    OR ${projectAlias}.id IN (SELECT l.project_id FROM project_group_links l
      JOIN namespaces g ON g.id = l.group_id
      JOIN members m ON m.user_id = :callerId AND m.source_type = 'Namespace'
        AND m.source_id = ANY(g.traversal_ids) AND ${ACTIVE_MEMBER}
      WHERE ${ACTIVE_LINK}${minimum('LEAST(m.access_level, l.group_access)')}))`;
}

/**
 * Restricts a project query to what the caller may see. `membershipSql`, when given, stands for
 * `projectMembershipSql` (the same condition, e.g. over a cached set of ids; its parameters set).
 */
export function whereProjectVisible<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  caller: Caller,
  projectAlias: string,
  namespaceAlias: string,
  membershipSql?: string,
): SelectQueryBuilder<T> {
  const user = caller.user;
  if (!user)
    return query.andWhere(`${projectAlias}.visibility_level = :publicLevel`, {
      publicLevel: Visibility.public,
    });
  if (user.admin) return query;
  const minimum = user.external ? Visibility.public : Visibility.internal;
  return query.andWhere(
    `(${projectAlias}.visibility_level >= :minimumVisible OR ${membershipSql ?? projectMembershipSql(projectAlias, namespaceAlias)})`,
    { minimumVisible: minimum, callerId: user.id },
  );
}

/**
 * Restricts a query joining projects (`projectAlias`, of namespace `namespaceAlias`) to those whose merge
 * requests the caller may read: merge requests turned on, and `read_merge_request` (public and internal
 * projects as they are visible, private ones from Reporter up).
 */
export function whereMergeRequestsReadable<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  caller: Caller,
  projectAlias: string,
  namespaceAlias: string,
): SelectQueryBuilder<T> {
  query.andWhere(`COALESCE((${projectAlias}.settings->>'merge_requests_enabled')::boolean, true)`);
  const user = caller.user;
  if (!user)
    return query.andWhere(`${projectAlias}.visibility_level = :publicLevel`, {
      publicLevel: Visibility.public,
    });
  if (user.admin) return query;
  return query.andWhere(
    `(${projectAlias}.visibility_level >= :minimumVisible OR ${projectMembershipSql(projectAlias, namespaceAlias, true)})`,
    {
      minimumVisible: user.external ? Visibility.public : Visibility.internal,
      callerId: user.id,
      minAccess: PROJECT_ABILITIES.read_merge_request,
    },
  );
}

/**
 * SQL true when the caller (`:callerId`) may see the group: by visibility, or by belonging to the group,
 * an ancestor, a descendant group, or a project inside it.
 */
export function groupMembershipSql(groupAlias: string): string {
  return `(${groupAlias}.traversal_ids && ARRAY(SELECT m.source_id FROM members m
      WHERE m.user_id = :callerId AND m.source_type = 'Namespace' AND ${ACTIVE_MEMBER})
    OR ${groupAlias}.id IN (SELECT unnest(d.traversal_ids) FROM members m
      JOIN namespaces d ON m.source_type = 'Namespace' AND d.id = m.source_id
      WHERE m.user_id = :callerId AND ${ACTIVE_MEMBER})
    OR ${groupAlias}.id IN (SELECT unnest(pn.traversal_ids) FROM members m
      JOIN projects pr ON m.source_type = 'Project' AND pr.id = m.source_id
      JOIN namespaces pn ON pn.id = pr.namespace_id
      WHERE m.user_id = :callerId AND ${ACTIVE_MEMBER}))`;
}

/**
 * SQL listing the groups the caller (`:callerId`) is a direct member of, at the level the parameter
 * `levelParam` holds or above: the one place group lists compare membership levels.
 */
export function directGroupMembershipsSql(levelParam: string): string {
  return `SELECT m.source_id FROM members m WHERE m.user_id = :callerId AND m.source_type = 'Namespace'
      AND m.access_level >= :${levelParam} AND ${ACTIVE_MEMBER}`;
}

/** Restricts a group (namespace) query to the groups the caller may see. */
export function whereGroupVisible<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  caller: Caller,
  groupAlias: string,
): SelectQueryBuilder<T> {
  const user = caller.user;
  if (!user)
    return query.andWhere(`${groupAlias}.visibility_level = :publicLevel`, {
      publicLevel: Visibility.public,
    });
  if (user.admin) return query;
  const minimum = user.external ? Visibility.public : Visibility.internal;
  return query.andWhere(
    `(${groupAlias}.visibility_level >= :minimumVisible OR ${groupMembershipSql(groupAlias)})`,
    { minimumVisible: minimum, callerId: user.id },
  );
}

export interface ProjectAccess {
  /** Highest of all: the level that decides what the caller may do. */
  level: number;
  /** Direct project membership. */
  project: number;
  /** Membership inherited from the namespace or an ancestor group. */
  group: number;
  /** The flags of the custom roles on those memberships. */
  memberRolePermissions?: string[];
}

const NO_ACCESS: ProjectAccess = { level: AccessLevel.NoAccess, project: 0, group: 0 };

/**
 * The caller's levels in project `p` of namespace `n`, as SQL expressions for a select list (0 for none):
 * direct membership, membership of the namespace or an ancestor, and membership of a group the project
 * is shared with (capped at the share's level). `callerParam` holds the user's id.
 */
export function projectAccessSql(p: string, n: string, callerParam: string) {
  const mine = `FROM members m WHERE m.user_id = ${callerParam} AND ${ACTIVE_MEMBER}`;
  return {
    project: `COALESCE((SELECT max(m.access_level) ${mine}
      AND m.source_type = 'Project' AND m.source_id = ${p}.id), 0)`,
    group: `COALESCE((SELECT max(m.access_level) ${mine}
      AND m.source_type = 'Namespace' AND m.source_id = ANY(${n}.traversal_ids)), 0)`,
    shared: `COALESCE((SELECT max(LEAST(m.access_level, l.group_access)) FROM project_group_links l
      JOIN namespaces g ON g.id = l.group_id
      JOIN members m ON m.user_id = ${callerParam} AND m.source_type = 'Namespace'
        AND m.source_id = ANY(g.traversal_ids) AND ${ACTIVE_MEMBER}
      WHERE l.project_id = ${p}.id AND ${ACTIVE_LINK}), 0)`,
    permissions: memberRolePermissionsSql(callerParam, `${n}.traversal_ids`, `${p}.id`),
  };
}

/** The access that the three levels of `projectAccessSql` give. */
export function projectAccessOf(
  project: unknown,
  group: unknown,
  shared: unknown,
  permissions?: string[] | null,
): ProjectAccess {
  const direct = Number(project);
  const inherited = Number(group);
  const level = Math.max(direct, inherited, Number(shared));
  if (level === 0) return NO_ACCESS;
  return permissions?.length
    ? { level, project: direct, group: inherited, memberRolePermissions: permissions }
    : { level, project: direct, group: inherited };
}

/** The caller's access to many projects in one query; projects missing from the map give no access. */
export async function projectAccessLevels(
  manager: EntityManager,
  caller: Caller,
  projectIds: number[],
): Promise<Map<number, ProjectAccess>> {
  const levels = new Map<number, ProjectAccess>();
  if (!caller.user || projectIds.length === 0) return levels;
  const access = projectAccessSql('p', 'n', '$2');
  const rows: Array<{ id: number; project: number; group: number; shared: number; permissions: string[] }> =
    await manager.query(
      `SELECT p.id, ${access.project} AS project, ${access.group} AS group, ${access.shared} AS shared,
       ${access.permissions} AS permissions
     FROM projects p
     JOIN namespaces n ON n.id = p.namespace_id
     WHERE p.id = ANY($1::int[])`,
      [projectIds, caller.user.id],
    );
  for (const row of rows) {
    const access = projectAccessOf(row.project, row.group, row.shared, row.permissions);
    if (access.level > 0) levels.set(Number(row.id), access);
  }
  return levels;
}

/** The caller's access to one project. */
export async function projectAccess(
  manager: EntityManager,
  caller: Caller,
  project: { id: number },
): Promise<ProjectAccess> {
  return (await projectAccessLevels(manager, caller, [project.id])).get(project.id) ?? NO_ACCESS;
}

/** The caller's access to a group through membership of it or of an ancestor (0 for none). */
export async function groupAccessLevel(
  manager: EntityManager,
  caller: Caller,
  group: { traversalIds: number[] },
): Promise<number> {
  if (!caller.user) return AccessLevel.NoAccess;
  const rows: Array<{ level: number }> = await manager.query(
    `SELECT COALESCE(max(access_level), 0) AS level FROM members m
     WHERE source_type = 'Namespace' AND source_id = ANY($1::int[]) AND user_id = $2 AND ${ACTIVE_MEMBER}`,
    [group.traversalIds, caller.user.id],
  );
  return Number(rows[0]?.level ?? 0);
}

/** A group as the abilities see it: its visibility, the caller's level, and any access inside it. */
export async function groupSubject(
  manager: EntityManager,
  caller: Caller,
  group: { id: number; traversalIds: number[]; visibilityLevel: number },
): Promise<Subject> {
  const accessLevel = await groupAccessLevel(manager, caller, group);
  const memberRolePermissions =
    accessLevel > 0 ? await groupMemberRolePermissions(manager, caller, group) : [];
  let hasDescendantAccess = false;
  if (caller.user && accessLevel === 0 && group.visibilityLevel < Visibility.public) {
    const rows: unknown[] = await manager.query(
      `SELECT 1 FROM members m
       LEFT JOIN namespaces d ON m.source_type = 'Namespace' AND d.id = m.source_id
       LEFT JOIN projects pr ON m.source_type = 'Project' AND pr.id = m.source_id
       LEFT JOIN namespaces pn ON pn.id = pr.namespace_id
       WHERE m.user_id = $2 AND ${ACTIVE_MEMBER}
         AND (d.traversal_ids @> ARRAY[$1::int] OR pn.traversal_ids @> ARRAY[$1::int])
       LIMIT 1`,
      [group.id, caller.user.id],
    );
    hasDescendantAccess = rows.length > 0;
  }
  return {
    visibilityLevel: group.visibilityLevel,
    accessLevel,
    hasDescendantAccess,
    ...(memberRolePermissions.length ? { memberRolePermissions } : {}),
  };
}

/** The flags of the custom roles on the caller's memberships of a group or its ancestors. */
async function groupMemberRolePermissions(
  manager: EntityManager,
  caller: Caller,
  group: { traversalIds: number[] },
): Promise<string[]> {
  if (!caller.user) return [];
  const rows: Array<{ permissions: string[] }> = await manager.query(
    `SELECT ${memberRolePermissionsSql('$2', '$1::int[]')} AS permissions`,
    [group.traversalIds, caller.user.id],
  );
  return rows[0]?.permissions ?? [];
}

/** A project as the abilities see it. */
export async function projectSubject(
  manager: EntityManager,
  caller: Caller,
  project: { id: number; visibilityLevel: number; archived?: boolean },
): Promise<Subject & { access: ProjectAccess }> {
  const access = await projectAccess(manager, caller, project);
  return {
    visibilityLevel: project.visibilityLevel,
    accessLevel: access.level,
    archived: project.archived,
    memberRolePermissions: access.memberRolePermissions,
    access,
  };
}

// --- merge_request_approvals family ---
/** May the caller approve merge requests in the project (`approve_merge_request`)? */
export const canApproveMergeRequests = (caller: Caller, subject: Subject) =>
  caller.user !== null && canProject(caller, 'approve_merge_request', subject);

/** Resetting a merge request's approvals: the bot of a project or group access token, a member of the project. */
export const canResetApprovals = (caller: Caller, accessLevel: number) =>
  caller.user?.userType === 'project_bot' && isMemberLevel(accessLevel);

/**
 * Instance abilities: about the caller and the instance, with no `:id` subject. The value says who has
 * the ability; `read_instance` admits whoever the operation's `security` admits (anonymous too when it
 * allows `{}`).
 */
export const INSTANCE_ABILITIES = {
  read_instance: 'anyone the operation admits',
  use_api: 'any signed-in user',
  create_group: 'administrators, and users who may create groups (not external)',
  admin_all_resources: 'administrators',
} as const;

export type InstanceAbility = keyof typeof INSTANCE_ABILITIES;

// ---- Finer rules (`x-forge-rule`), declared truthfully (issue 24) --------------------------------------
/**
 * A named rule finer than an operation's `x-ability`, applied by its service once the resource is found.
 * A rule with a `floor` also admits someone the ability alone would not (an author, the member
 * themself): the request pipeline then enforces only the floor, and the service the ability or the rule.
 * `summary` is what the docs say; each operation's description names its rule.
 */
interface ForgeRule {
  summary: string;
  floor?: { project?: ProjectAbility; group?: GroupAbility };
}

export const FORGE_RULES = {
  or_snippet_author: {
    summary: "the snippet's author may too, with create_snippet",
    floor: { project: 'create_snippet' },
  },
  or_merge_request_author: {
    summary: "the merge request's author may too, with read_merge_request",
    floor: { project: 'read_merge_request' },
  },
  or_note_author: {
    summary: "the note's author may too, with read_merge_request",
    floor: { project: 'read_merge_request' },
  },
  or_auto_merge_setter: {
    summary: 'whoever set the automatic merge may cancel it too, with read_merge_request',
    floor: { project: 'read_merge_request' },
  },
  or_self: {
    summary: 'a member may remove themselves, with read_project or read_group',
    floor: { project: 'read_project', group: 'read_group' },
  },
  can_push_to_branch: {
    summary:
      "the branch decides (GitLab's can_push_to_branch?): protected branches need their push level, and a collaborator on a merge request from a fork may push to its source branch, with read_code",
    floor: { project: 'read_code' },
  },
  protected_ref: { summary: 'a protected branch or tag needs the level its protection gives' },
  protected_tag: {
    summary: 'a protected tag needs Maintainer; checked once the tag is found, with read_code',
    floor: { project: 'read_code' },
  },
  own_snippet: { summary: "only the snippet's author, or an administrator" },
  own_token: { summary: "the caller's own tokens; an administrator's any (another's answers 401)" },
  note_author_only: { summary: "only the note's author, administrators included" },
  awarder_only: { summary: 'only the user who awarded the emoji, or an administrator' },
  bots_only: { summary: 'only the bot user of a project or group access token' },
  admins_only: { summary: 'administrators only, once the resource is found' },
  up_to_own_level: { summary: "no level above the caller's own may be given, unless by an administrator" },
  approval_eligibility: {
    summary: "the merge request's author and committers may not approve it, as the project's settings say",
  },
  anonymous_by_username: { summary: 'anonymous callers must look a user up by username (403 otherwise)' },
  signed_in_only: { summary: 'anonymous callers are refused with 403' },
  projects_limit: {
    summary: "the caller's projects limit, and a personal namespace (external users have none: 403)",
  },
  fork_namespace: { summary: 'the target namespace must take the fork (external users have none: 404)' },
  also_admin_group_label: { summary: "Planner or above in the project's group too" },
} as const satisfies Record<string, ForgeRule>;

export type ForgeRuleName = keyof typeof FORGE_RULES;

/**
 * The ability the request pipeline enforces before the handler: the rule's floor, or only that the
 * caller sees the subject when GitLab refuses with 400 after checking the parameters, else the ability.
 */
export function pipelineAbility(declaration: {
  subject: 'project' | 'group';
  ability?: string;
  rule?: string;
  refusal?: string;
}): string | undefined {
  const { subject, ability, rule, refusal } = declaration;
  const floor = rule
    ? (FORGE_RULES[rule as ForgeRuleName] as ForgeRule | undefined)?.floor?.[subject]
    : undefined;
  if (floor) return floor;
  if (refusal === 'bad_request') return subject === 'project' ? 'read_project' : 'read_group';
  return ability;
}
// ---- end of finer rules ----------------------------------------------------------------------------------

/** The contract's `x-subject`: what the `:id` of an operation names, if anything. */
export type SubjectKind = 'project' | 'group' | 'instance' | 'none';

/** The ability names each subject kind accepts in `x-ability` (`none` takes none). */
export const ABILITY_NAMES: Record<SubjectKind, readonly string[]> = {
  project: Object.keys(PROJECT_ABILITIES),
  group: Object.keys(GROUP_ABILITIES),
  instance: Object.keys(INSTANCE_ABILITIES),
  none: [],
};

/** What a declaration decides: the caller goes on, or GitLab's refusal (401, 404 naming the subject, 403). */
export type DeclaredOutcome = 'allowed' | 'unauthorized' | 'not_found' | 'forbidden';

/** A caller as the declarations see it: the account's facts and its access to the subject. */
export interface CallerFacts {
  signedIn: boolean;
  blocked?: boolean;
  admin?: boolean;
  external?: boolean;
  canCreateGroup?: boolean;
  /** The caller's effective access level to the subject (0 for none). */
  accessLevel?: number;
  /** Groups: the caller belongs to something inside the group. */
  hasDescendantAccess?: boolean;
  /** The flags of a custom role the caller's membership carries. */
  memberRolePermissions?: readonly string[];
}

/** The callers the permission matrix tries, each with its facts (members have the level on the subject). */
export const CALLER_KINDS = {
  anonymous: { signedIn: false },
  non_member: { signedIn: true, canCreateGroup: true },
  guest: { signedIn: true, canCreateGroup: true, accessLevel: AccessLevel.Guest },
  reporter: {
    signedIn: true,
    canCreateGroup: true,

    accessLevel: AccessLevel.Reporter,
  },
  developer: {
    signedIn: true,
    canCreateGroup: true,

    accessLevel: AccessLevel.Developer,
  },
  maintainer: {
    signedIn: true,
    canCreateGroup: true,

    accessLevel: AccessLevel.Maintainer,
  },
  owner: { signedIn: true, canCreateGroup: true, accessLevel: AccessLevel.Owner },
  /** member_roles family: Guests whose membership carries a custom role. */
  guest_custom_all: {
    signedIn: true,
    canCreateGroup: true,
    accessLevel: AccessLevel.Guest,
    memberRolePermissions: MEMBER_ROLE_PERMISSIONS,
  },
  guest_custom_read_code: {
    signedIn: true,
    canCreateGroup: true,
    accessLevel: AccessLevel.Guest,
    memberRolePermissions: ['read_code'],
  },
  admin: { signedIn: true, admin: true, canCreateGroup: true },
  external: { signedIn: true, external: true, canCreateGroup: true },
  blocked: { signedIn: true, blocked: true },
} as const satisfies Record<string, CallerFacts>;

export type CallerKind = keyof typeof CALLER_KINDS;

/**
 * The outcome a declaration (`x-subject`, `x-ability`) gives a caller, before any finer rule of the
 * service: what the request pipeline enforces and what the permission matrix expects. Pure.
 */
export function declaredOutcome(
  declaration: { subject: SubjectKind; ability?: string; allowsAnonymous: boolean },
  facts: CallerFacts,
  visibility: VisibilityName,
): DeclaredOutcome {
  // A blocked user's token authenticates no one.
  if (facts.blocked) return 'unauthorized';
  if (!facts.signedIn && !declaration.allowsAnonymous) return 'unauthorized';
  const { subject: kind, ability } = declaration;
  if (kind === 'none') return 'allowed';
  if (kind === 'instance') {
    const admin = facts.admin === true;
    const may: Record<InstanceAbility, boolean> = {
      read_instance: true,
      use_api: facts.signedIn,
      create_group: admin || (facts.signedIn && !facts.external && facts.canCreateGroup === true),
      admin_all_resources: admin,
    };
    if (may[ability as InstanceAbility]) return 'allowed';
    return facts.signedIn ? 'forbidden' : 'unauthorized';
  }
  // The abilities read only these facts of the user.
  const user = facts.signedIn
    ? ({ admin: facts.admin === true, external: facts.external === true } as Caller['user'])
    : null;
  const caller: Caller = { user, token: null };
  const subject: Subject = {
    visibilityLevel: Visibility[visibility],
    accessLevel: facts.accessLevel ?? 0,
    hasDescendantAccess: facts.hasDescendantAccess,
    memberRolePermissions: facts.memberRolePermissions,
  };
  if (!canSee(caller, subject)) return 'not_found';
  const allowed =
    kind === 'project'
      ? canProject(caller, ability as ProjectAbility, subject)
      : canGroup(caller, ability as GroupAbility, subject);
  return allowed ? 'allowed' : 'forbidden';
}

export const isProjectAbility = (name: string): name is ProjectAbility => name in PROJECT_ABILITIES;
export const isGroupAbility = (name: string): name is GroupAbility => name in GROUP_ABILITIES;
const isInstanceAbility = (name: string): name is InstanceAbility => name in INSTANCE_ABILITIES;

/**
 * An instance ability (`x-subject: instance`): 401 for an anonymous caller, 403 for a signed-in one who
 * lacks it. The finer rules of creating groups and projects (can_create_group, projects_limit) stay in
 * their services.
 */
export function authorizeInstance(caller: Caller, ability: string): void {
  if (!isInstanceAbility(ability)) throw new Error(`unknown instance ability ${ability}`);
  if (ability === 'read_instance') return;
  const user = caller.user;
  if (!user) throw unauthorized();
  const may = user.admin || ability === 'use_api' || (ability === 'create_group' && !user.external);
  if (!may) throw forbidden();
}
