/**
 * The shared model of "may this caller do X to Y": roles, visibility, membership, custom-role grants,
 * and the catalogue of abilities that the families declare in their manifests (`abilities`).
 *
 * A subject (project or group) is described by its visibility and the caller's access level to it.
 * Reading depends on visibility; every other ability needs a minimum role. `authorize` turns a refusal
 * into GitLab's answer: 404 naming the resource when the caller may not even see it, 403 otherwise.
 * A family's finer rules (author-only, awarder-only) are its own predicates, built on `hasProjectLevel`.
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

/**
 * How a project or group ability is decided: the role it needs once the subject is seen, and the
 * refinements some abilities share. Families declare theirs (`defineAbilities`) in their manifests.
 */
export interface SubjectAbilityRule {
  /** The role needed beyond seeing the subject (`AccessLevel.NoAccess`: seeing it is enough). */
  minimum: number;
  /**
   * Projects: on a public or internal project whoever sees it has the ability (`anyone`), or any
   * signed-in user who sees it (`signed_in`), whatever the role.
   */
  openWhenVisible?: 'anyone' | 'signed_in';
  /** Projects: refused on an archived project, whose content is read-only (settings and members are not). */
  refusedWhenArchived?: boolean;
}

/** What instance abilities read of the caller: the account's facts, no subject. */
export interface InstanceFacts {
  signedIn: boolean;
  admin: boolean;
  external: boolean;
  /** Known to the permission matrix; the services check `can_create_group` themselves. */
  canCreateGroup?: boolean;
}

/** An instance ability (`x-subject: instance`): who has it. */
export interface InstanceAbilityRule {
  admits(who: InstanceFacts): boolean;
}

/** The abilities a custom role's permission flag opens, on projects and on groups. */
export interface RoleGrant {
  project?: readonly string[];
  group?: readonly string[];
}

/** A family's part of the catalogue: its abilities by subject kind, and what custom-role flags grant. */
export interface AbilityDeclarations {
  project?: Record<string, SubjectAbilityRule>;
  group?: Record<string, SubjectAbilityRule>;
  instance?: Record<string, InstanceAbilityRule>;
  /**
   * Custom-role flag -> the abilities it grants. The names are not checked against the catalogue: a
   * flag may name the ability of a family to come, and grants it from the day that family declares it.
   */
  grants?: Readonly<Record<string, RoleGrant>>;
  /** The family's finer rules (`x-forge-rule`), which its services apply once the resource is found. */
  rules?: Record<string, FinerRule>;
}

/**
 * A named rule finer than an operation's `x-ability`. A rule with a `floor` also admits someone the
 * ability alone would not (an author, the member themself): the request pipeline then enforces only the
 * floor, and the service the ability or the rule. `summary` is what the docs say; each operation's
 * description names its rule.
 */
export interface FinerRule {
  summary: string;
  floor?: { project?: string; group?: string };
}

export const defineAbilities = <D extends AbilityDeclarations>(declarations: D): D => declarations;

/**
 * Each family's declarations, by family name, added by declaration merging
 * (`interface FamilyAbilities { snippets: typeof snippetsAbilities }`): the typed catalogue.
 */
export interface FamilyAbilities {
  core: typeof coreAbilities;
}

type DeclaredIn<K extends 'project' | 'group' | 'instance'> = {
  [F in keyof FamilyAbilities]: FamilyAbilities[F] extends { [P in K]: infer T } ? keyof T & string : never;
}[keyof FamilyAbilities];

export type ProjectAbility = DeclaredIn<'project'>;
export type GroupAbility = DeclaredIn<'group'>;
export type InstanceAbility = DeclaredIn<'instance'>;

/** The contract's `x-subject`: what the `:id` of an operation names, if anything. */
export type SubjectKind = 'project' | 'group' | 'instance' | 'none';

/**
 * The merged catalogue. It is one per process, filled from the list of families when that list is
 * loaded (`installAbilities` in family.ts): the abilities are pure questions asked everywhere, as
 * functions rather than through a service.
 */
const catalogue = {
  project: new Map<string, SubjectAbilityRule>(),
  group: new Map<string, SubjectAbilityRule>(),
  instance: new Map<string, InstanceAbilityRule>(),
  grants: new Map<string, { project: Set<string>; group: Set<string> }>(),
  rules: new Map<string, FinerRule>(),
};

/** The finer rules' names (`x-forge-rule`), sorted. */
export const RULE_NAMES: string[] = [];

/** The ability names each subject kind accepts in `x-ability` (`none` takes none), sorted. */
export const ABILITY_NAMES: Record<SubjectKind, string[]> = {
  project: [],
  group: [],
  instance: [],
  none: [],
};

/** Replaces the catalogue with the families' declarations; an ability declared twice stops the start. */
export function registerAbilities(
  families: ReadonlyArray<{ name: string; abilities?: AbilityDeclarations }>,
) {
  for (const table of Object.values(catalogue)) table.clear();
  for (const { name: family, abilities } of families) {
    for (const kind of ['project', 'group', 'instance'] as const)
      for (const [name, rule] of Object.entries(abilities?.[kind] ?? {})) {
        const table = catalogue[kind] as Map<string, unknown>;
        if (table.has(name)) throw new Error(`${family}: the ${kind} ability ${name} is declared twice`);
        table.set(name, rule);
      }
    for (const [name, rule] of Object.entries(abilities?.rules ?? {})) {
      if (catalogue.rules.has(name)) throw new Error(`${family}: the rule ${name} is declared twice`);
      catalogue.rules.set(name, rule);
    }
    for (const [flag, grant] of Object.entries(abilities?.grants ?? {})) {
      const granted = catalogue.grants.get(flag) ?? { project: new Set(), group: new Set() };
      for (const name of grant.project ?? []) granted.project.add(name);
      for (const name of grant.group ?? []) granted.group.add(name);
      catalogue.grants.set(flag, granted);
    }
  }
  for (const kind of ['project', 'group', 'instance'] as const)
    ABILITY_NAMES[kind].splice(0, Infinity, ...[...catalogue[kind].keys()].sort());
  RULE_NAMES.splice(0, Infinity, ...[...catalogue.rules.keys()].sort());
  for (const [name, { floor }] of catalogue.rules)
    for (const [kind, ability] of Object.entries(floor ?? {}))
      if (!catalogue[kind as 'project' | 'group'].has(ability))
        throw new Error(`the rule ${name} has an unknown ${kind} ability ${ability} as its floor`);
}

/** The ability a rule admits on its own (an author's, the member's own), if it admits anyone else. */
export const ruleFloor = (rule: string, subject: 'project' | 'group'): string | undefined =>
  catalogue.rules.get(rule)?.floor?.[subject];

/**
 * The ability the request pipeline enforces before the handler: the rule's floor; nothing beyond seeing
 * the subject when GitLab refuses with 400 after checking the parameters (the service refuses); else the
 * declared ability.
 */
export function pipelineAbility(declaration: {
  subject: 'project' | 'group';
  ability?: string;
  rule?: string;
  refusal?: string;
}): string | undefined {
  const { subject, ability, rule, refusal } = declaration;
  if (rule !== undefined && !catalogue.rules.has(rule)) throw new Error(`unknown rule ${rule}`);
  const floor = rule ? ruleFloor(rule, subject) : undefined;
  if (floor) return floor;
  if (refusal === 'bad_request') return undefined;
  return ability;
}

function ruleOf<K extends 'project' | 'group' | 'instance'>(kind: K, ability: string) {
  const rule = catalogue[kind].get(ability);
  if (!rule) throw new Error(`unknown ${kind} ability ${ability}`);
  return rule as K extends 'instance' ? InstanceAbilityRule : SubjectAbilityRule;
}

// ---- Custom roles: the flags a membership's custom role may carry -------------------------------------

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

/** Does a custom role on the caller's memberships grant `ability` on a subject of this kind? */
function grantedByRole(subject: Subject, kind: 'project' | 'group', ability: string): boolean {
  return (subject.memberRolePermissions ?? []).some(
    (flag) => catalogue.grants.get(flag)?.[kind].has(ability) === true,
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

export function canProject(caller: Caller, ability: ProjectAbility, subject: Subject): boolean {
  const rule = ruleOf('project', ability);
  if (subject.archived && rule.refusedWhenArchived) return false;
  if (rule.openWhenVisible && subject.visibilityLevel >= Visibility.internal)
    return (rule.openWhenVisible === 'anyone' || caller.user !== null) && canSee(caller, subject);
  return canWith(caller, subject, rule.minimum, { kind: 'project', ability });
}

export function canGroup(caller: Caller, ability: GroupAbility, subject: Subject): boolean {
  return canWith(caller, subject, ruleOf('group', ability).minimum, { kind: 'group', ability });
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

/**
 * A project ability's role, for a caller whose level is known, visibility aside (the project is already
 * seen): what the families' finer predicates build on.
 */
export const hasProjectLevel = (caller: Caller, ability: ProjectAbility, accessLevel: number) =>
  isAdmin(caller) || accessLevel >= ruleOf('project', ability).minimum;

/**
 * The role that reads a private project's content (code, merge requests); public and internal content
 * is open to whoever sees the project.
 */
export const PRIVATE_CONTENT_READER = AccessLevel.Reporter;

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

/**
 * SQL true when the membership row `alias` (of members) holds the role `level` or above, for SQL that
 * names a role rather than binding it (`:minAccess` in `projectMembershipSql`).
 */
export const memberAtLeastSql = (alias: string, level: number) => `${alias}.access_level >= ${Number(level)}`;

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
      minAccess: PRIVATE_CONTENT_READER,
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
    const who = { signedIn: facts.signedIn, admin: facts.admin === true, external: facts.external === true };
    if (ruleOf('instance', ability ?? '').admits({ ...who, canCreateGroup: facts.canCreateGroup === true }))
      return 'allowed';
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

/** Core's instance abilities: about the caller alone, no subject. */
export const coreAbilities = defineAbilities({
  /** Finer rules (`x-forge-rule`) the family's services apply once the resource is found. */
  rules: {
    admins_only: { summary: 'administrators only, once the resource is found' },
    anonymous_by_username: { summary: 'anonymous callers must look a user up by username (403 otherwise)' },
    signed_in_only: { summary: 'anonymous callers are refused with 403' },
  },
  instance: {
    /** Whoever the operation's `security` admits (anonymous too when it allows `{}`). */
    read_instance: { admits: () => true },
    use_api: { admits: (who) => who.signedIn },
    admin_all_resources: { admits: (who) => who.admin },
  },
});

export const isProjectAbility = (name: string): name is ProjectAbility => catalogue.project.has(name);
export const isGroupAbility = (name: string): name is GroupAbility => catalogue.group.has(name);

/**
 * An instance ability (`x-subject: instance`): 401 for an anonymous caller, 403 for a signed-in one who
 * lacks it. The finer rules of creating groups and projects (can_create_group, projects_limit) stay in
 * their services.
 */
export function authorizeInstance(caller: Caller, ability: string): void {
  const user = caller.user;
  const who = { signedIn: user !== null, admin: user?.admin === true, external: user?.external === true };
  if (ruleOf('instance', ability).admits(who)) return;
  if (!user) throw unauthorized();
  throw forbidden();
}
