import { In, type DataSource, type EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { recordNotFound, unprocessable } from '../core/errors.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import { AccessLevel } from '../members/member.entity.js';
import type { ProjectsService, ProjectView } from '../projects/projects.service.js';
import type { ServiceDeps } from '../services.js';
import { ProtectedTag, ProtectedTagCreateAccessLevel } from './protected-tag.entity.js';
import { isUniqueViolation } from '../db/errors.js';

export type ProtectTagParams = components['schemas']['ProtectedTagCreate'];
type EntryInput = components['schemas']['ProtectedTagAccessLevelCreate'];

/** Names of the users and groups that entries refer to, for their descriptions. */
export interface EntryNames {
  users: Map<number, string>;
  groups: Map<number, string>;
}

export interface ProtectedTagRecords {
  rules: ProtectedTag[];
  names: EntryNames;
}

/** Whom one entry names: exactly one field is set, as the table requires. */
type Target = Pick<ProtectedTagCreateAccessLevel, 'accessLevel' | 'userId' | 'groupId' | 'deployKeyId'>;

/** A user wins over a group, a group over a deploy key, a deploy key over a role, as in GitLab. */
function targetOf(entry: EntryInput): Target {
  const none: Target = { accessLevel: null, userId: null, groupId: null, deployKeyId: null };
  if (entry.user_id !== undefined) return { ...none, userId: entry.user_id };
  if (entry.group_id !== undefined) return { ...none, groupId: entry.group_id };
  if (entry.deploy_key_id !== undefined) return { ...none, deployKeyId: entry.deploy_key_id };
  return { ...none, accessLevel: entry.access_level ?? null };
}

const TAKEN = 'Name has already been taken';
const LABEL = 'Create access levels';

/** Protected tag rules: Maintainer or higher reads and changes them (GitLab's `admin_project`). */
export class ProtectedTagsService {
  private readonly dataSource: DataSource;

  constructor(
    deps: ServiceDeps,
    private readonly projects: ProjectsService,
  ) {
    this.dataSource = deps.dataSource;
  }

  async list(
    caller: Caller,
    projectId: string | number,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<ProtectedTag> & { names: EntryNames }> {
    const view = await this.projects.findAuthorized(caller, projectId, 'admin_project');
    const query = this.dataSource
      .getRepository(ProtectedTag)
      .createQueryBuilder('pt')
      .where('pt.project_id = :projectId', { projectId: view.project.id })
      .orderBy('pt.id', 'ASC');
    const page = await paginateOffset(query, params, request);
    const { rules, names } = await this.withEntries(this.dataSource.manager, page.items);
    return { items: rules, headers: page.headers, names };
  }

  async get(caller: Caller, projectId: string | number, name: string): Promise<ProtectedTagRecords> {
    const view = await this.projects.findAuthorized(caller, projectId, 'admin_project');
    return this.withEntries(this.dataSource.manager, [await this.findRule(view, name)]);
  }

  async create(
    caller: Caller,
    projectId: string | number,
    params: ProtectTagParams,
  ): Promise<ProtectedTagRecords> {
    const view = await this.projects.findAuthorized(caller, projectId, 'admin_project');
    const listed = params.allowed_to_create ?? [];
    const entries: EntryInput[] = [
      ...(params.create_access_level !== undefined ? [{ access_level: params.create_access_level }] : []),
      ...listed,
    ];
    if (entries.length === 0) entries.push({ access_level: AccessLevel.Maintainer });
    const targets = entries.map(targetOf);
    const messages = [
      ...(params.name.trim() === '' ? ["Name can't be blank"] : []),
      ...(params.name.length > 255 ? ['Name is too long (maximum is 255 characters)'] : []),
      ...((await this.dataSource
        .getRepository(ProtectedTag)
        .existsBy({ projectId: view.project.id, name: params.name }))
        ? [TAKEN]
        : []),
      ...(await this.entryErrors(view, targets)),
    ];
    if (messages.length > 0) throw unprocessable(messages);
    const ruleId = await this.dataSource
      .transaction(async (tx) => {
        const rule = await tx
          .getRepository(ProtectedTag)
          .save({ projectId: view.project.id, name: params.name });
        await tx
          .getRepository(ProtectedTagCreateAccessLevel)
          .insert(targets.map((target) => ({ protectedTagId: rule.id, ...target })));
        return rule.id;
      })
      .catch((err: unknown) => {
        // Someone protected the same name meanwhile.
        if (isUniqueViolation(err)) throw unprocessable([TAKEN]);
        throw err;
      });
    const rule = await this.dataSource.getRepository(ProtectedTag).findOneByOrFail({ id: ruleId });
    return this.withEntries(this.dataSource.manager, [rule]);
  }

  async remove(caller: Caller, projectId: string | number, name: string): Promise<void> {
    const view = await this.projects.findAuthorized(caller, projectId, 'admin_project');
    const rule = await this.findRule(view, name);
    await this.dataSource.getRepository(ProtectedTag).delete(rule.id);
  }

  /** The rule named exactly so: a wildcard rule is found by its pattern, not by the tags it matches. */
  private async findRule(view: ProjectView, name: string): Promise<ProtectedTag> {
    const rule = await this.dataSource
      .getRepository(ProtectedTag)
      .findOneBy({ projectId: view.project.id, name });
    if (!rule) throw recordNotFound();
    return rule;
  }

  /** The rules' entries in one query, and the user and group names in one query each. */
  private async withEntries(manager: EntityManager, rules: ProtectedTag[]): Promise<ProtectedTagRecords> {
    const names: EntryNames = { users: new Map(), groups: new Map() };
    if (rules.length === 0) return { rules, names };
    const entries = await manager.getRepository(ProtectedTagCreateAccessLevel).find({
      where: { protectedTagId: In(rules.map((rule) => rule.id)) },
      order: { id: 'ASC' },
    });
    for (const rule of rules) rule.createAccessLevels = entries.filter((e) => e.protectedTagId === rule.id);
    const userIds = [...new Set(entries.flatMap((e) => (e.userId === null ? [] : [e.userId])))];
    const groupIds = [...new Set(entries.flatMap((e) => (e.groupId === null ? [] : [e.groupId])))];
    const named = (sql: string, ids: number[]): Promise<Array<{ id: number; name: string }>> =>
      ids.length > 0 ? manager.query(sql, [ids]) : Promise.resolve([]);
    const [users, groups] = await Promise.all([
      named('SELECT id, name FROM users WHERE id = ANY($1::int[])', userIds),
      named('SELECT id, name FROM namespaces WHERE id = ANY($1::int[])', groupIds),
    ]);
    for (const user of users) names.users.set(Number(user.id), user.name);
    for (const group of groups) names.groups.set(Number(group.id), group.name);
    return { rules, names };
  }

  /**
   * GitLab's record validation of the entries, as full messages: users must exist and be members of
   * the project, groups must exist and have it shared with them at Developer or higher, deploy keys
   * must exist (forge-api has none yet), and no role, user or group twice.
   */
  private async entryErrors(view: ProjectView, targets: Target[]): Promise<string[]> {
    const userIds = [...new Set(targets.flatMap((t) => (t.userId === null ? [] : [t.userId])))];
    const groupIds = [...new Set(targets.flatMap((t) => (t.groupId === null ? [] : [t.groupId])))];
    const found = await this.lookups(view, userIds, groupIds);
    const messages: string[] = [];
    const add = (text: string) => {
      const message = `${LABEL} ${text}`;
      if (!messages.includes(message)) messages.push(message);
    };
    const seen = { accessLevel: new Set<number>(), userId: new Set<number>(), groupId: new Set<number>() };
    for (const target of targets) {
      if (target.userId !== null) {
        if (seen.userId.has(target.userId)) add('user has already been taken');
        seen.userId.add(target.userId);
        if (!found.users.has(target.userId)) add("user can't be blank");
        else if (!found.members.has(target.userId)) add('user is not a member of the project');
      } else if (target.groupId !== null) {
        if (seen.groupId.has(target.groupId)) add('group has already been taken');
        seen.groupId.add(target.groupId);
        if (!found.groups.has(target.groupId)) add("group can't be blank");
        else if (!found.sharedGroups.has(target.groupId)) add('group does not have access to the project');
      } else if (target.deployKeyId !== null) {
        add("deploy key can't be blank");
      } else if (target.accessLevel === null) {
        add("access level can't be blank");
      } else {
        if (seen.accessLevel.has(target.accessLevel)) add('access level has already been taken');
        seen.accessLevel.add(target.accessLevel);
      }
    }
    return messages;
  }

  /** Which users exist and are members of the project; which groups exist and have it shared. */
  private async lookups(view: ProjectView, userIds: number[], groupIds: number[]) {
    const manager = this.dataSource.manager;
    const projectId = view.project.id;
    const ids = (rows: Array<{ id: number }>) => new Set(rows.map((row) => Number(row.id)));
    const query = (run: boolean, sql: string, params: unknown[]): Promise<Array<{ id: number }>> =>
      run ? manager.query(sql, params) : Promise.resolve([]);
    const [users, members, groups, sharedGroups] = await Promise.all([
      query(userIds.length > 0, 'SELECT id FROM users WHERE id = ANY($1::int[])', [userIds]),
      query(
        userIds.length > 0,
        `SELECT DISTINCT m.user_id AS id FROM members m
         WHERE m.user_id = ANY($1::int[]) AND (m.expires_at IS NULL OR m.expires_at > current_date)
           AND ((m.source_type = 'Project' AND m.source_id = $2)
             OR (m.source_type = 'Namespace' AND m.source_id = ANY($3::int[]))
             OR (m.source_type = 'Namespace' AND EXISTS (
               SELECT 1 FROM project_group_links l JOIN namespaces g ON g.id = l.group_id
               WHERE l.project_id = $2 AND (l.expires_at IS NULL OR l.expires_at > current_date)
                 AND m.source_id = ANY(g.traversal_ids))))`,
        [userIds, projectId, view.project.namespace.traversalIds],
      ),
      query(groupIds.length > 0, `SELECT id FROM namespaces WHERE kind = 'group' AND id = ANY($1::int[])`, [
        groupIds,
      ]),
      query(
        groupIds.length > 0,
        `SELECT group_id AS id FROM project_group_links
         WHERE project_id = $1 AND group_id = ANY($2::int[]) AND group_access >= $3
           AND (expires_at IS NULL OR expires_at > current_date)`,
        [projectId, groupIds, AccessLevel.Developer],
      ),
    ]);
    return { users: ids(users), members: ids(members), groups: ids(groups), sharedGroups: ids(sharedGroups) };
  }
}
