import { In, type DataSource, type EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { recordNotFound, unprocessable } from '../core/errors.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import { AccessLevel } from '../core/access-level.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { CoreDeps } from '../core/family.js';
import { ProtectedTag, ProtectedTagCreateAccessLevel } from './protected-tag.entity.js';
import { isUniqueViolation } from '../db/errors.js';
import {
  entryErrors,
  entryTarget,
  loadEntryNames,
  type EntryInput,
  type EntryNames,
} from '../protected_branches/access-entries.js';
import type { AccessEntry } from '../protected_branches/protected-refs.js';

export type ProtectTagParams = components['schemas']['ProtectedTagCreate'];

export interface ProtectedTagRecords {
  rules: ProtectedTag[];
  names: EntryNames;
}

const TAKEN = 'Name has already been taken';
const LABEL = 'Create access levels';

/** Protected tag rules: Maintainer or higher reads and changes them (GitLab's `admin_project`, checked by the pipeline). */
export class ProtectedTagsService {
  private readonly dataSource: DataSource;

  constructor(deps: CoreDeps) {
    this.dataSource = deps.dataSource;
  }

  async list(
    caller: Caller,
    view: ProjectView,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<ProtectedTag> & { names: EntryNames }> {
    const query = this.dataSource
      .getRepository(ProtectedTag)
      .createQueryBuilder('pt')
      .where('pt.project_id = :projectId', { projectId: view.project.id })
      .orderBy('pt.id', 'ASC');
    const page = await paginateOffset(query, params, request);
    const { rules, names } = await this.withEntries(this.dataSource.manager, page.items);
    return { items: rules, headers: page.headers, names };
  }

  async get(caller: Caller, view: ProjectView, name: string): Promise<ProtectedTagRecords> {
    return this.withEntries(this.dataSource.manager, [await this.findRule(view, name)]);
  }

  async create(caller: Caller, view: ProjectView, params: ProtectTagParams): Promise<ProtectedTagRecords> {
    const listed = params.allowed_to_create ?? [];
    const entries: EntryInput[] = [
      ...(params.create_access_level !== undefined ? [{ access_level: params.create_access_level }] : []),
      ...listed,
    ];
    if (entries.length === 0) entries.push({ access_level: AccessLevel.Maintainer });
    const targets = entries.map(entryTarget);
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

  async remove(caller: Caller, view: ProjectView, name: string): Promise<void> {
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
    if (rules.length === 0) return { rules, names: { users: new Map(), groups: new Map() } };
    const entries = await manager.getRepository(ProtectedTagCreateAccessLevel).find({
      where: { protectedTagId: In(rules.map((rule) => rule.id)) },
      order: { id: 'ASC' },
    });
    for (const rule of rules) rule.createAccessLevels = entries.filter((e) => e.protectedTagId === rule.id);
    return { rules, names: await loadEntryNames(manager, entries) };
  }

  /** GitLab's record validation of the entries, as full messages. */
  private entryErrors(view: ProjectView, targets: AccessEntry[]): Promise<string[]> {
    return entryErrors(this.dataSource.manager, view.project, [
      { label: LABEL, entries: targets.map((target) => ({ target, checked: true })) },
    ]);
  }
}
