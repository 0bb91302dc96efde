import { In, type DataSource, type EntityManager } from 'typeorm';
import type { components, operations } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { conflict, forbidden, recordNotFound, unprocessable } from '../core/errors.js';
import { paginateOffset, type Page, type RequestInfo } from '../core/pagination.js';
import { entryAllows } from '../git/push-rules.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { ServiceDeps, Services } from '../services.js';
import {
  ProtectedBranch,
  ProtectedBranchAccessLevel,
  type ProtectedBranchAction,
} from './protected-branch.entity.js';
import type { AccessLevelNames } from './protected-branch.presenter.js';
import { isUniqueViolation } from '../db/errors.js';
import { containing } from '../core/search.js';

export type ListProtectedBranchesParams = NonNullable<
  operations['listProtectedBranches']['parameters']['query']
>;
export type ProtectBranchParams = components['schemas']['ProtectedBranchCreate'];
export type UpdateProtectedBranchParams = components['schemas']['ProtectedBranchUpdate'];

/** Rules with their access levels and the names the descriptions need. */
export interface ProtectedBranchRecords {
  rules: ProtectedBranch[];
  names: AccessLevelNames;
}

const ACTIONS: readonly ProtectedBranchAction[] = ['push', 'merge', 'unprotect'];
const LABELS: Record<ProtectedBranchAction, string> = {
  push: 'Push access levels',
  merge: 'Merge access levels',
  unprotect: 'Unprotect access levels',
};
const MAINTAINER = 40;
const DEVELOPER = 30;

/** Whom one entry names: exactly one of the four is set (the table checks it too). */
interface Target {
  accessLevel: number | null;
  userId: number | null;
  groupId: number | null;
  deployKeyId: number | null;
}

interface EntryInput {
  access_level?: number;
  user_id?: number;
  group_id?: number;
  deploy_key_id?: number;
}

interface EntryChange extends EntryInput {
  id?: number;
  _destroy?: boolean;
}

/** An entry of one action's list after the request: kept, changed or new. */
interface PlannedEntry {
  id?: number;
  target: Target;
  /** New or changed, so its user, group or deploy key is checked. */
  checked: boolean;
}

const hasTarget = (entry: EntryInput) =>
  entry.access_level !== undefined ||
  entry.user_id !== undefined ||
  entry.group_id !== undefined ||
  entry.deploy_key_id !== undefined;

/** A user wins over a group, a group over a deploy key, a deploy key over a role, as in GitLab. */
function targetOf(entry: EntryInput): Target {
  const none: Target = { accessLevel: null, userId: null, groupId: null, deployKeyId: null };
  if (entry.user_id !== undefined) return { ...none, userId: entry.user_id };
  if (entry.group_id !== undefined) return { ...none, groupId: entry.group_id };
  if (entry.deploy_key_id !== undefined) return { ...none, deployKeyId: entry.deploy_key_id };
  return { ...none, accessLevel: entry.access_level ?? null };
}

export class ProtectedBranchesService {
  private readonly dataSource: DataSource;

  constructor(
    deps: ServiceDeps,
    private readonly services: Pick<Services, 'projects' | 'repositories'>,
  ) {
    this.dataSource = deps.dataSource;
  }

  async list(
    caller: Caller,
    projectId: string | number,
    params: ListProtectedBranchesParams,
    request: RequestInfo,
  ): Promise<Page<ProtectedBranch> & { names: AccessLevelNames }> {
    const { view } = await this.services.repositories.open(caller, projectId, 'read_code');
    const query = this.dataSource
      .getRepository(ProtectedBranch)
      .createQueryBuilder('pb')
      .where('pb.project_id = :projectId', { projectId: view.project.id })
      .orderBy('pb.id', 'ASC');
    if (params.search) query.andWhere('pb.name ILIKE :term', { term: containing(params.search) });
    const page = await paginateOffset(query, params, request);
    const { rules, names } = await this.withAccessLevels(this.dataSource.manager, page.items);
    return { items: rules, headers: page.headers, names };
  }

  async get(caller: Caller, projectId: string | number, name: string): Promise<ProtectedBranchRecords> {
    const { view } = await this.services.repositories.open(caller, projectId, 'read_code');
    return this.withAccessLevels(this.dataSource.manager, [await this.findRule(view, name)]);
  }

  async create(
    caller: Caller,
    projectId: string | number,
    params: ProtectBranchParams,
  ): Promise<ProtectedBranchRecords> {
    const view = await this.services.projects.findAuthorized(caller, projectId, 'admin_protected_branch');
    const repository = this.dataSource.getRepository(ProtectedBranch);
    if (await repository.existsBy({ projectId: view.project.id, name: params.name }))
      throw conflict(`Protected branch '${params.name}' already exists`);
    const planned = new Map<ProtectedBranchAction, PlannedEntry[]>();
    for (const action of ACTIONS) {
      const list = params[`allowed_to_${action}`] ?? [];
      const level = params[`${action}_access_level`] ?? (list.length === 0 ? MAINTAINER : undefined);
      const entries: PlannedEntry[] = [];
      if (level !== undefined) entries.push({ target: targetOf({ access_level: level }), checked: true });
      for (const entry of list) entries.push({ target: targetOf(entry), checked: true });
      planned.set(action, entries);
    }
    const messages = [...nameErrors(params.name), ...(await this.entryErrors(view, planned))];
    if (messages.length > 0) throw unprocessable(messages);
    const ruleId = await this.dataSource
      .transaction(async (tx) => {
        const rule = await tx.getRepository(ProtectedBranch).save({
          projectId: view.project.id,
          name: params.name,
          allowForcePush: params.allow_force_push ?? false,
          codeOwnerApprovalRequired: params.code_owner_approval_required ?? false,
        });
        await insertEntries(tx, rule.id, planned);
        return rule.id;
      })
      .catch((err: unknown) => {
        if (isUniqueViolation(err)) throw conflict(`Protected branch '${params.name}' already exists`);
        throw err;
      });
    return this.reload(ruleId);
  }

  async update(
    caller: Caller,
    projectId: string | number,
    name: string,
    params: UpdateProtectedBranchParams,
  ): Promise<ProtectedBranchRecords> {
    const { view, rule } = await this.findForChange(caller, projectId, name);
    const planned = new Map<ProtectedBranchAction, PlannedEntry[]>();
    const removed: number[] = [];
    for (const action of ACTIONS) {
      const current = (rule.accessLevels ?? []).filter((entry) => entry.action === action);
      const entries: PlannedEntry[] = current.map((entry) => ({
        id: entry.id,
        target: entry,
        checked: false,
      }));
      for (const change of (params[`allowed_to_${action}`] ?? []) as EntryChange[]) {
        if (change.id === undefined) {
          if (!change._destroy) entries.push({ target: targetOf(change), checked: true });
          continue;
        }
        const index = entries.findIndex((entry) => entry.id === change.id);
        if (index < 0) throw recordNotFound();
        if (change._destroy) {
          removed.push(change.id);
          entries.splice(index, 1);
        } else if (hasTarget(change))
          entries[index] = { id: change.id, target: targetOf(change), checked: true };
      }
      planned.set(action, entries);
    }
    const messages = await this.entryErrors(view, planned);
    if (messages.length > 0) throw unprocessable(messages);
    await this.dataSource.transaction(async (tx) => {
      const levels = tx.getRepository(ProtectedBranchAccessLevel);
      if (removed.length > 0) await levels.delete({ id: In(removed), protectedBranchId: rule.id });
      for (const entries of planned.values())
        for (const entry of entries)
          if (entry.id !== undefined && entry.checked)
            await levels.update({ id: entry.id, protectedBranchId: rule.id }, { ...entry.target });
      const added = new Map(
        [...planned].map(([action, entries]) => [action, entries.filter((entry) => entry.id === undefined)]),
      );
      await insertEntries(tx, rule.id, added);
      await tx.getRepository(ProtectedBranch).update(rule.id, {
        allowForcePush: params.allow_force_push ?? rule.allowForcePush,
        codeOwnerApprovalRequired: params.code_owner_approval_required ?? rule.codeOwnerApprovalRequired,
        updatedAt: new Date(),
      });
    });
    return this.reload(rule.id);
  }

  async remove(caller: Caller, projectId: string | number, name: string): Promise<void> {
    const { rule } = await this.findForChange(caller, projectId, name);
    await this.dataSource.getRepository(ProtectedBranch).delete(rule.id);
  }

  /**
   * The rule to change: Maintainer or higher, and when the rule names who may unprotect it, one of
   * those. GitLab checks the project first, then finds the rule, then the unprotect list.
   */
  private async findForChange(caller: Caller, projectId: string | number, name: string) {
    const view = await this.services.projects.findAuthorized(caller, projectId, 'admin_protected_branch');
    const rule = await this.findRule(view, name);
    const unprotect = (rule.accessLevels ?? []).filter((entry) => entry.action === 'unprotect');
    if (unprotect.length > 0) {
      const actor = await this.services.repositories.rules.actor(caller, view.accessLevel);
      if (!unprotect.some((entry) => entryAllows(entry, actor))) throw forbidden();
    }
    return { view, rule };
  }

  private async findRule(view: ProjectView, name: string): Promise<ProtectedBranch> {
    const rule = await this.dataSource.getRepository(ProtectedBranch).findOne({
      where: { projectId: view.project.id, name },
      relations: { accessLevels: true },
    });
    if (!rule) throw recordNotFound();
    return rule;
  }

  private async reload(ruleId: number): Promise<ProtectedBranchRecords> {
    const rule = await this.dataSource.getRepository(ProtectedBranch).findOneByOrFail({ id: ruleId });
    return this.withAccessLevels(this.dataSource.manager, [rule]);
  }

  /** The rules' access levels in one query, and the user and group names in one query each. */
  private async withAccessLevels(
    manager: EntityManager,
    rules: ProtectedBranch[],
  ): Promise<ProtectedBranchRecords> {
    const names: AccessLevelNames = { users: new Map(), groups: new Map() };
    if (rules.length === 0) return { rules, names };
    const levels = await manager.getRepository(ProtectedBranchAccessLevel).find({
      where: { protectedBranchId: In(rules.map((rule) => rule.id)) },
      order: { id: 'ASC' },
    });
    for (const rule of rules)
      rule.accessLevels = levels.filter((level) => level.protectedBranchId === rule.id);
    const userIds = [...new Set(levels.flatMap((level) => (level.userId === null ? [] : [level.userId])))];
    const groupIds = [...new Set(levels.flatMap((level) => (level.groupId === null ? [] : [level.groupId])))];
    const [users, groups] = await Promise.all([
      userIds.length
        ? (manager.query('SELECT id, name FROM users WHERE id = ANY($1::int[])', [userIds]) as Promise<
            Named[]
          >)
        : [],
      groupIds.length
        ? (manager.query('SELECT id, name FROM namespaces WHERE id = ANY($1::int[])', [groupIds]) as Promise<
            Named[]
          >)
        : [],
    ]);
    for (const user of users) names.users.set(Number(user.id), user.name);
    for (const group of groups) names.groups.set(Number(group.id), group.name);
    return { rules, names };
  }

  /**
   * GitLab's record validation of the entries, as full messages: users must be members of the project,
   * groups must have it shared with them at Developer or higher, deploy keys must exist (none do yet),
   * and no role, user or group twice in one list.
   */
  private async entryErrors(
    view: ProjectView,
    planned: Map<ProtectedBranchAction, PlannedEntry[]>,
  ): Promise<string[]> {
    const checked = [...planned.values()].flat().filter((entry) => entry.checked);
    const userIds = [
      ...new Set(checked.flatMap((entry) => (entry.target.userId === null ? [] : [entry.target.userId]))),
    ];
    const groupIds = [
      ...new Set(checked.flatMap((entry) => (entry.target.groupId === null ? [] : [entry.target.groupId]))),
    ];
    const { existingUsers, members, existingGroups, sharedGroups } = await this.lookups(
      view,
      userIds,
      groupIds,
    );
    const messages: string[] = [];
    const add = (action: ProtectedBranchAction, text: string) => {
      const message = `${LABELS[action]} ${text}`;
      if (!messages.includes(message)) messages.push(message);
    };
    for (const [action, entries] of planned) {
      const seen = { accessLevel: new Set<number>(), userId: new Set<number>(), groupId: new Set<number>() };
      for (const { target, checked: isChecked } of entries) {
        if (target.userId !== null) {
          if (seen.userId.has(target.userId)) add(action, 'user has already been taken');
          seen.userId.add(target.userId);
          if (!isChecked) continue;
          if (!existingUsers.has(target.userId)) add(action, "user can't be blank");
          else if (!members.has(target.userId)) add(action, 'user is not a member of the project');
        } else if (target.groupId !== null) {
          if (seen.groupId.has(target.groupId)) add(action, 'group has already been taken');
          seen.groupId.add(target.groupId);
          if (!isChecked) continue;
          if (!existingGroups.has(target.groupId)) add(action, "group can't be blank");
          else if (!sharedGroups.has(target.groupId))
            add(action, 'group does not have access to the project');
        } else if (target.deployKeyId !== null) {
          // forge-api has no deploy keys yet, so none can be found.
          add(action, "deploy key can't be blank");
        } else if (target.accessLevel === null) {
          add(action, "access level can't be blank");
        } else {
          if (seen.accessLevel.has(target.accessLevel)) add(action, 'access level has already been taken');
          seen.accessLevel.add(target.accessLevel);
        }
      }
    }
    return messages;
  }

  /** Which users exist and are members of the project, which groups exist and have it shared. */
  private async lookups(view: ProjectView, userIds: number[], groupIds: number[]) {
    const manager = this.dataSource.manager;
    const projectId = view.project.id;
    const ids = (rows: Array<{ id: number }>) => new Set(rows.map((row) => Number(row.id)));
    const none = Promise.resolve([] as Array<{ id: number }>);
    const [existingUsers, members, existingGroups, sharedGroups] = await Promise.all([
      userIds.length ? manager.query('SELECT id FROM users WHERE id = ANY($1::int[])', [userIds]) : none,
      userIds.length
        ? manager.query(
            `SELECT DISTINCT m.user_id AS id FROM members m
             WHERE m.user_id = ANY($1::int[]) AND (m.expires_at IS NULL OR m.expires_at > current_date)
               AND ((m.source_type = 'Project' AND m.source_id = $2)
                 OR (m.source_type = 'Namespace' AND m.source_id = ANY($3::int[]))
                 OR (m.source_type = 'Namespace' AND EXISTS (
                   SELECT 1 FROM project_group_links l JOIN namespaces g ON g.id = l.group_id
                   WHERE l.project_id = $2 AND (l.expires_at IS NULL OR l.expires_at > current_date)
                     AND m.source_id = ANY(g.traversal_ids))))`,
            [userIds, projectId, view.project.namespace.traversalIds],
          )
        : none,
      groupIds.length
        ? manager.query(`SELECT id FROM namespaces WHERE kind = 'group' AND id = ANY($1::int[])`, [groupIds])
        : none,
      groupIds.length
        ? manager.query(
            `SELECT group_id AS id FROM project_group_links
             WHERE project_id = $1 AND group_id = ANY($2::int[]) AND group_access >= $3
               AND (expires_at IS NULL OR expires_at > current_date)`,
            [projectId, groupIds, DEVELOPER],
          )
        : none,
    ]);
    return {
      existingUsers: ids(existingUsers),
      members: ids(members),
      existingGroups: ids(existingGroups),
      sharedGroups: ids(sharedGroups),
    };
  }
}

interface Named {
  id: number;
  name: string;
}

/** Name errors of the rule itself, as full messages. */
function nameErrors(name: string): string[] {
  if (name.trim() === '') return ["Name can't be blank"];
  if (name.length > 255) return ['Name is too long (maximum is 255 characters)'];
  return [];
}

async function insertEntries(
  tx: EntityManager,
  protectedBranchId: number,
  planned: Map<ProtectedBranchAction, PlannedEntry[]>,
): Promise<void> {
  const rows = [...planned].flatMap(([action, entries]) =>
    entries.map((entry) => ({ protectedBranchId, action, ...entry.target })),
  );
  if (rows.length > 0) await tx.getRepository(ProtectedBranchAccessLevel).insert(rows);
}
