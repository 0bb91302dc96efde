import { In, type DataSource, type EntityManager } from 'typeorm';
import type { components, operations } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { conflict, forbidden, recordNotFound, unprocessable } from '../core/errors.js';
import { paginateOffset, type Page, type RequestInfo } from '../core/pagination.js';
import { entryAllows } from './protected-refs.js';
import {
  entryErrors,
  entryTarget,
  loadEntryNames,
  type EntryInput,
  type EntryNames,
  type PlannedEntry as CheckedEntry,
} from './access-entries.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import {
  ProtectedBranch,
  ProtectedBranchAccessLevel,
  type ProtectedBranchAction,
} from './protected-branch.entity.js';
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
  names: EntryNames;
}

const ACTIONS: readonly ProtectedBranchAction[] = ['push', 'merge', 'unprotect'];
const LABELS: Record<ProtectedBranchAction, string> = {
  push: 'Push access levels',
  merge: 'Merge access levels',
  unprotect: 'Unprotect access levels',
};
const MAINTAINER = 40;

interface EntryChange extends EntryInput {
  id?: number;
  _destroy?: boolean;
}

/** An entry of one action's list after the request: kept, changed or new (only those are checked). */
interface PlannedEntry extends CheckedEntry {
  id?: number;
}

const hasTarget = (entry: EntryInput) =>
  entry.access_level !== undefined ||
  entry.user_id !== undefined ||
  entry.group_id !== undefined ||
  entry.deploy_key_id !== undefined;

export class ProtectedBranchesService {
  private readonly dataSource: DataSource;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'repositories' | 'protectedRefs'>,
  ) {
    this.dataSource = deps.dataSource;
  }

  async list(
    caller: Caller,
    view: ProjectView,
    params: ListProtectedBranchesParams,
    request: RequestInfo,
  ): Promise<Page<ProtectedBranch> & { names: EntryNames }> {
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

  async get(caller: Caller, view: ProjectView, name: string): Promise<ProtectedBranchRecords> {
    return this.withAccessLevels(this.dataSource.manager, [await this.findRule(view, name)]);
  }

  async create(
    caller: Caller,
    view: ProjectView,
    params: ProtectBranchParams,
  ): Promise<ProtectedBranchRecords> {
    const repository = this.dataSource.getRepository(ProtectedBranch);
    if (await repository.existsBy({ projectId: view.project.id, name: params.name }))
      throw conflict(`Protected branch '${params.name}' already exists`);
    const planned = new Map<ProtectedBranchAction, PlannedEntry[]>();
    for (const action of ACTIONS) {
      const list = params[`allowed_to_${action}`] ?? [];
      const level = params[`${action}_access_level`] ?? (list.length === 0 ? MAINTAINER : undefined);
      const entries: PlannedEntry[] = [];
      if (level !== undefined) entries.push({ target: entryTarget({ access_level: level }), checked: true });
      for (const entry of list) entries.push({ target: entryTarget(entry), checked: true });
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
    view: ProjectView,
    name: string,
    params: UpdateProtectedBranchParams,
  ): Promise<ProtectedBranchRecords> {
    const { rule } = await this.findForChange(caller, view, name);
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
          if (!change._destroy) entries.push({ target: entryTarget(change), checked: true });
          continue;
        }
        const index = entries.findIndex((entry) => entry.id === change.id);
        if (index < 0) throw recordNotFound();
        if (change._destroy) {
          removed.push(change.id);
          entries.splice(index, 1);
        } else if (hasTarget(change))
          entries[index] = { id: change.id, target: entryTarget(change), checked: true };
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

  async remove(caller: Caller, view: ProjectView, name: string): Promise<void> {
    const { rule } = await this.findForChange(caller, view, name);
    await this.dataSource.getRepository(ProtectedBranch).delete(rule.id);
  }

  /**
   * The rule to change: when the rule names who may unprotect it, one of those (the pipeline checked
   * `admin_protected_branch` first). GitLab checks the project first, then finds the rule, then the unprotect list.
   */
  private async findForChange(caller: Caller, view: ProjectView, name: string) {
    const rule = await this.findRule(view, name);
    const unprotect = (rule.accessLevels ?? []).filter((entry) => entry.action === 'unprotect');
    if (unprotect.length > 0) {
      const actor = await this.services.protectedRefs.actor(caller, view.accessLevel);
      if (!unprotect.some((entry) => entryAllows(entry, actor))) throw forbidden();
    }
    return { rule };
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
    if (rules.length === 0) return { rules, names: { users: new Map(), groups: new Map() } };
    const levels = await manager.getRepository(ProtectedBranchAccessLevel).find({
      where: { protectedBranchId: In(rules.map((rule) => rule.id)) },
      order: { id: 'ASC' },
    });
    for (const rule of rules)
      rule.accessLevels = levels.filter((level) => level.protectedBranchId === rule.id);
    return { rules, names: await loadEntryNames(manager, levels) };
  }

  /** GitLab's record validation of every list of entries, as full messages. */
  private entryErrors(
    view: ProjectView,
    planned: Map<ProtectedBranchAction, PlannedEntry[]>,
  ): Promise<string[]> {
    return entryErrors(
      this.dataSource.manager,
      view.project,
      [...planned].map(([action, entries]) => ({ label: LABELS[action], entries })),
    );
  }
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
