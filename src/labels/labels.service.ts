import { In, type DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import type { components, operations } from '../../generated/openapi.js';
import { whereGroupVisible, whereProjectVisible } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { badParameter, conflict, notFound, validationFailed } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { stripTags } from '../core/html.js';
import { recordId } from '../core/ids.js';
import { paginateOffset, type Page, type RequestInfo } from '../core/pagination.js';
import { containing } from '../core/search.js';
import { isUniqueViolation } from '../db/errors.js';
import type { GroupView } from '../groups/groups.service.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import { Project } from '../projects/project.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { parseColor } from './colors.js';
import { Label, LabelPriority } from './label.entity.js';

type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;
export type ListProjectLabelsParams = Query<'listProjectLabels'>;
export type ListGroupLabelsParams = Query<'listGroupLabels'>;
export type GetGroupLabelParams = Query<'getGroupLabel'>;
export type CreateLabelParams = components['schemas']['GroupLabelCreate'] & { priority?: number | null };
export type UpdateLabelParams = components['schemas']['GroupLabelUpdate'] & { priority?: number | null };
export type UpdateLabelByNameParams = UpdateLabelParams & components['schemas']['LabelSelector'];

/** The counts a label list shows with `with_counts=true`. */
export interface LabelCounts {
  open_issues_count: number;
  closed_issues_count: number;
  open_merge_requests_count: number;
}

/** A label as a list or a single read shows it: the project's priority, and the counts when asked. */
export interface LabelRecord {
  label: Label;
  /** The project's priority (project reads only); null when it has none. */
  priority: number | null;
  counts?: LabelCounts;
}

/** Where labels are counted: a project's merge requests, or those of the projects in a group. */
export type LabelCountScope = { projectId: number } | { groupId: number };

/**
 * Counts open merge requests per label id, over what the caller may see in `scope`. The merge requests
 * family registers one (`labels.countOpenMergeRequestsWith`); until then every count is 0.
 */
export type LabelCounter = (
  caller: Caller,
  labelIds: number[],
  scope: LabelCountScope,
) => Promise<Map<number, number>>;

const MAX_DESCRIPTION_BYTES = 512 * 1024;
/** The colour GitLab gives labels it creates on the fly. */
const DEFAULT_COLOR = '#6699cc';
const UPDATE_FIELDS = ['new_name', 'color', 'description', 'priority'] as const;
const GROUP_UPDATE_FIELDS = ['new_name', 'color', 'description'] as const;

/**
 * Project and group labels. A project uses its own labels and its group's and ancestor groups';
 * names are unique exactly (case included) within one project or group, as in GitLab.
 *
 * For other families (merge requests):
 * - `availableToProject(projectId, names)`: the labels a project may use, by name, ignoring case.
 * - `findOrCreateForProject(projectId, names, tx)`: those labels, creating the missing ones in the project.
 * - `byIds(ids)`: labels by id, for presenting them (`presentLabelBasic`).
 * - `countOpenMergeRequestsWith(counter)`: the hook behind `open_merge_requests_count`.
 */
export class LabelsService {
  private readonly dataSource: DataSource;
  private openMergeRequestsCounter: LabelCounter | undefined;

  constructor(deps: CoreDeps) {
    this.dataSource = deps.dataSource;
  }

  /** The merge requests family counts open merge requests per label through this. */
  countOpenMergeRequestsWith(counter: LabelCounter): void {
    this.openMergeRequestsCounter = counter;
  }

  /**
   * The labels project `projectId` may use (its own, its group's and ancestor groups') whose names
   * match one of `names` ignoring case, ordered by name. A name may match several labels.
   */
  async availableToProject(
    projectId: number,
    names: readonly string[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Label[]> {
    if (names.length === 0) return [];
    const groupIds = await this.projectGroupIds(manager, projectId);
    return manager
      .getRepository(Label)
      .createQueryBuilder('l')
      .where('(l.project_id = :projectId OR l.group_id = ANY(:groupIds::int[]))', { projectId, groupIds })
      .andWhere('lower(l.title) = ANY(:names::text[])', { names: names.map((n) => n.toLowerCase()) })
      .orderBy('l.title', 'ASC')
      .addOrderBy('l.id', 'ASC')
      .getMany();
  }

  /**
   * One label per name for project `projectId`: an available label of that exact name, else one whose
   * name matches ignoring case, else a new project label in GitLab's default colour (GitLab's
   * find-or-create for issuables). Names are trimmed; blank ones are skipped.
   */
  async findOrCreateForProject(
    projectId: number,
    names: readonly string[],
    manager: EntityManager,
  ): Promise<Label[]> {
    const titles = [...new Set(names.map(cleanTitle).filter((title) => title !== ''))];
    const errors = Object.assign({}, ...titles.map(titleErrors)) as Record<string, string[]>;
    if (Object.keys(errors).length > 0) throw validationFailed(errors);
    const pick = (found: Label[], title: string) =>
      found.find((label) => label.title === title) ??
      found.find((label) => label.title.toLowerCase() === title.toLowerCase());
    let found = await this.availableToProject(projectId, titles, manager);
    const missing = titles.filter((title) => !pick(found, title));
    if (missing.length > 0) {
      // A concurrent creation of the same name wins; the look-up below then finds it.
      await manager.query(
        `INSERT INTO labels (title, color, project_id) SELECT unnest($1::text[]), $2, $3
         ON CONFLICT (project_id, title) WHERE project_id IS NOT NULL DO NOTHING`,
        [missing, DEFAULT_COLOR, projectId],
      );
      found = await this.availableToProject(projectId, titles, manager);
    }
    const labels = new Map<number, Label>();
    for (const title of titles) {
      const label = pick(found, title);
      if (label) labels.set(label.id, label);
    }
    return [...labels.values()];
  }

  /** Labels by id, in one query (any order). */
  byIds(ids: readonly number[], manager: EntityManager = this.dataSource.manager): Promise<Label[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return manager.getRepository(Label).findBy({ id: In([...ids]) });
  }

  // --- Project labels ---

  async listForProject(
    caller: Caller,
    view: ProjectView,
    params: ListProjectLabelsParams,
    request: RequestInfo,
  ): Promise<Page<LabelRecord>> {
    const scope = this.projectScope(view, params.include_ancestor_groups ?? true);
    const query = this.scopedQuery(scope);
    if (params.search) this.whereSearch(query, params.search);
    const page = await paginateOffset(query, params, request);
    const records = await this.withPriorities(page.items, view.project.id);
    if (params.with_counts) await this.addCounts(caller, records, { projectId: view.project.id });
    return { items: records, headers: page.headers };
  }

  async getForProject(view: ProjectView, idOrTitle: string, includeAncestors = true): Promise<LabelRecord> {
    const label = await this.find(this.projectScope(view, includeAncestors), idOrTitle);
    return (await this.withPriorities([label], view.project.id))[0];
  }

  async createForProject(view: ProjectView, params: CreateLabelParams): Promise<LabelRecord> {
    const label = await this.create(this.projectScope(view, true), { projectId: view.project.id }, params, {
      projectId: view.project.id,
      priority: params.priority,
    });
    return (await this.withPriorities([label], view.project.id))[0];
  }

  async updateForProject(
    view: ProjectView,
    idOrTitle: string,
    params: UpdateLabelParams,
  ): Promise<LabelRecord> {
    requireOneOf(params, UPDATE_FIELDS);
    const label = await this.find(this.projectScope(view, false), idOrTitle);
    await this.update(label, params, view.project.id);
    return (await this.withPriorities([label], view.project.id))[0];
  }

  /** The older update: the label named by `label_id` or `name` in the body. */
  updateForProjectByName(view: ProjectView, params: UpdateLabelByNameParams): Promise<LabelRecord> {
    return this.updateForProject(view, selectorOf(params), params);
  }

  async removeFromProject(view: ProjectView, idOrTitle: string): Promise<void> {
    const label = await this.find(this.projectScope(view, false), idOrTitle);
    await this.dataSource.getRepository(Label).delete(label.id);
  }

  // --- Group labels ---

  async listForGroup(
    caller: Caller,
    view: GroupView,
    params: ListGroupLabelsParams,
    request: RequestInfo,
  ): Promise<Page<LabelRecord>> {
    const query = this.scopedQuery(await this.groupScope(caller, view, params));
    if (params.search) this.whereSearch(query, params.search);
    const page = await paginateOffset(query, params, request);
    const records: LabelRecord[] = page.items.map((label) => ({ label, priority: null }));
    if (params.with_counts) await this.addCounts(caller, records, { groupId: view.group.id });
    return { items: records, headers: page.headers };
  }

  async getForGroup(
    caller: Caller,
    view: GroupView,
    idOrTitle: string,
    params: GetGroupLabelParams,
  ): Promise<LabelRecord> {
    return { label: await this.find(await this.groupScope(caller, view, params), idOrTitle), priority: null };
  }

  async createForGroup(view: GroupView, params: CreateLabelParams): Promise<LabelRecord> {
    const scope: LabelScope = { projectIds: [], groupIds: view.group.traversalIds };
    const label = await this.create(scope, { groupId: view.group.id }, params, {});
    return { label, priority: null };
  }

  async updateForGroup(view: GroupView, idOrTitle: string, params: UpdateLabelParams): Promise<LabelRecord> {
    requireOneOf(params, GROUP_UPDATE_FIELDS);
    const label = await this.find({ projectIds: [], groupIds: [view.group.id] }, idOrTitle);
    await this.update(label, params, undefined);
    return { label, priority: null };
  }

  updateForGroupByName(view: GroupView, params: UpdateLabelByNameParams): Promise<LabelRecord> {
    return this.updateForGroup(view, selectorOf(params), params);
  }

  async removeFromGroup(view: GroupView, idOrTitle: string): Promise<void> {
    const label = await this.find({ projectIds: [], groupIds: [view.group.id] }, idOrTitle);
    await this.dataSource.getRepository(Label).delete(label.id);
  }

  // --- Rules shared by both ---

  private async create(
    scope: LabelScope,
    owner: { projectId?: number; groupId?: number },
    params: CreateLabelParams,
    priority: { projectId?: number; priority?: number | null },
  ): Promise<Label> {
    const title = cleanTitle(params.name);
    if (await this.scopedQuery(scope).andWhere('l.title = :title', { title }).getExists())
      throw conflict('Label already exists');
    const color = parseColor(params.color);
    const errors = {
      ...titleErrors(title),
      ...colorErrors(color),
      ...descriptionErrors(params.description),
    };
    if (Object.keys(errors).length > 0) throw validationFailed(errors);
    const description = params.description === undefined ? null : cleanDescription(params.description);
    return this.dataSource
      .transaction(async (tx) => {
        const label = await tx.getRepository(Label).save({
          title,
          color: color!,
          description,
          projectId: owner.projectId ?? null,
          groupId: owner.groupId ?? null,
        });
        if (priority.projectId !== undefined && priority.priority !== undefined && priority.priority !== null)
          await setPriority(tx, priority.projectId, label.id, priority.priority);
        return label;
      })
      .catch((err: unknown) => {
        if (isUniqueViolation(err)) throw conflict('Label already exists');
        throw err;
      });
  }

  /** Applies the changes to `label` (in place); `projectId` says whose priority `priority` sets. */
  private async update(
    label: Label,
    params: UpdateLabelParams,
    projectId: number | undefined,
  ): Promise<void> {
    const changes: Partial<Label> = {};
    const errors: Record<string, string[]> = {};
    if (params.new_name !== undefined) {
      changes.title = cleanTitle(params.new_name);
      Object.assign(errors, titleErrors(changes.title));
    }
    if (params.color !== undefined) {
      const color = parseColor(params.color);
      Object.assign(errors, colorErrors(color));
      if (color) changes.color = color;
    }
    if (params.description !== undefined) {
      Object.assign(errors, descriptionErrors(params.description));
      changes.description = cleanDescription(params.description);
    }
    if (Object.keys(errors).length > 0) throw validationFailed(errors);
    await this.dataSource
      .transaction(async (tx) => {
        if (changes.title !== undefined && changes.title !== label.title) {
          const taken = await tx
            .getRepository(Label)
            .createQueryBuilder('l')
            .where(label.projectId !== null ? 'l.project_id = :owner' : 'l.group_id = :owner', {
              owner: label.projectId ?? label.groupId,
            })
            .andWhere('l.title = :title AND l.id <> :id', { title: changes.title, id: label.id })
            .getExists();
          if (taken) throw validationFailed({ title: ['has already been taken'] });
        }
        if (Object.keys(changes).length > 0)
          await tx.getRepository(Label).update(label.id, { ...changes, updatedAt: new Date() });
        if (projectId !== undefined && 'priority' in params && params.priority !== undefined) {
          if (params.priority === null)
            await tx.getRepository(LabelPriority).delete({ projectId, labelId: label.id });
          else await setPriority(tx, projectId, label.id, params.priority);
        }
      })
      .catch((err: unknown) => {
        if (isUniqueViolation(err)) throw validationFailed({ title: ['has already been taken'] });
        throw err;
      });
    // Deleted meanwhile: as if it had not been found.
    const reloaded = await this.dataSource.getRepository(Label).findOneBy({ id: label.id });
    if (!reloaded) throw notFound('Label');
    Object.assign(label, reloaded);
  }

  /** A label in `scope` by id (digits) or else by exact name: 404 `Label Not Found`. */
  private async find(scope: LabelScope, idOrTitle: string): Promise<Label> {
    const id = recordId(idOrTitle);
    if (id !== undefined) {
      const byId = await this.scopedQuery(scope).andWhere('l.id = :id', { id }).getOne();
      if (byId) return byId;
    }
    const byTitle = await this.scopedQuery(scope).andWhere('l.title = :title', { title: idOrTitle }).getOne();
    if (!byTitle) throw notFound('Label');
    return byTitle;
  }

  private scopedQuery(scope: LabelScope): SelectQueryBuilder<Label> {
    return this.dataSource
      .getRepository(Label)
      .createQueryBuilder('l')
      .where('(l.project_id = ANY(:projectIds::int[]) OR l.group_id = ANY(:groupIds::int[]))', scope)
      .orderBy('l.title', 'ASC')
      .addOrderBy('l.id', 'ASC');
  }

  private whereSearch(query: SelectQueryBuilder<Label>, search: string) {
    query.andWhere('(l.title ILIKE :term OR l.description ILIKE :term)', { term: containing(search) });
  }

  private projectScope(view: ProjectView, includeAncestors: boolean): LabelScope {
    const namespace = view.project.namespace;
    return {
      projectIds: [view.project.id],
      groupIds: includeAncestors && namespace.kind === 'group' ? namespace.traversalIds : [],
    };
  }

  /** The group's labels, with its ancestors', subgroups' and projects' as the parameters ask. */
  private async groupScope(
    caller: Caller,
    { group }: GroupView,
    params: {
      include_ancestor_groups?: boolean;
      include_descendant_groups?: boolean;
      only_group_labels?: boolean;
    },
  ): Promise<LabelScope> {
    const groupIds = params.include_ancestor_groups === false ? [group.id] : [...group.traversalIds];
    const withDescendants = params.include_descendant_groups === true;
    let descendants: number[] = [];
    if (withDescendants) {
      const query = this.dataSource
        .getRepository(Namespace)
        .createQueryBuilder('g')
        .select('g.id', 'id')
        .where(`g.kind = 'group' AND g.traversal_ids @> ARRAY[:groupId]::int[] AND g.id <> :groupId`, {
          groupId: group.id,
        });
      whereGroupVisible(query, caller, 'g');
      descendants = (await query.getRawMany<{ id: number }>()).map((row) => Number(row.id));
    }
    let projectIds: number[] = [];
    if (params.only_group_labels === false) {
      const query = this.dataSource
        .getRepository(Project)
        .createQueryBuilder('p')
        .innerJoin(Namespace, 'n', 'n.id = p.namespace_id')
        .select('p.id', 'id')
        .where('p.namespace_id = ANY(:namespaceIds::int[])', { namespaceIds: [group.id, ...descendants] });
      whereProjectVisible(query, caller, 'p', 'n');
      projectIds = (await query.getRawMany<{ id: number }>()).map((row) => Number(row.id));
    }
    return { projectIds, groupIds: [...groupIds, ...descendants] };
  }

  private async projectGroupIds(manager: EntityManager, projectId: number): Promise<number[]> {
    const rows: Array<{ ids: number[] }> = await manager.query(
      `SELECT CASE WHEN n.kind = 'group' THEN n.traversal_ids ELSE '{}'::int[] END AS ids
       FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = $1`,
      [projectId],
    );
    return rows[0]?.ids ?? [];
  }

  /** The project's priorities for a page of labels, in one query. */
  private async withPriorities(labels: Label[], projectId: number): Promise<LabelRecord[]> {
    const priorities = labels.length
      ? await this.dataSource
          .getRepository(LabelPriority)
          .findBy({ projectId, labelId: In(labels.map((label) => label.id)) })
      : [];
    const byLabel = new Map(priorities.map((p) => [p.labelId, p.priority]));
    return labels.map((label) => ({ label, priority: byLabel.get(label.id) ?? null }));
  }

  private async addCounts(caller: Caller, records: LabelRecord[], scope: LabelCountScope): Promise<void> {
    const ids = records.map((record) => record.label.id);
    const openMergeRequests =
      this.openMergeRequestsCounter && ids.length > 0
        ? await this.openMergeRequestsCounter(caller, ids, scope)
        : new Map<number, number>();
    for (const record of records)
      record.counts = {
        // forge-api has no issues yet.
        open_issues_count: 0,
        closed_issues_count: 0,
        open_merge_requests_count: openMergeRequests.get(record.label.id) ?? 0,
      };
  }
}

/** The projects and groups whose labels are in view. */
interface LabelScope {
  projectIds: number[];
  groupIds: number[];
}

async function setPriority(tx: EntityManager, projectId: number, labelId: number, priority: number) {
  await tx.query(
    `INSERT INTO label_priorities (project_id, label_id, priority) VALUES ($1, $2, $3)
     ON CONFLICT (project_id, label_id) DO UPDATE SET priority = EXCLUDED.priority, updated_at = now()`,
    [projectId, labelId, priority],
  );
}

function requireOneOf(params: object, fields: readonly string[]) {
  if (!fields.some((field) => field in params && (params as Record<string, unknown>)[field] !== undefined))
    throw badParameter(`${fields.join(', ')} are missing, at least one parameter must be provided`);
}

/** `label_id` or `name`, exactly one (Grape's `exactly_one_of`). */
function selectorOf(params: UpdateLabelByNameParams): string {
  const byId = params.label_id !== undefined;
  const byName = params.name !== undefined;
  if (byId && byName) throw badParameter('label_id, name are mutually exclusive');
  if (!byId && !byName)
    throw badParameter('label_id, name are missing, exactly one parameter must be provided');
  return byId ? String(params.label_id) : params.name!;
}

const cleanTitle = (name: string) => stripTags(name).trim();
const cleanDescription = (description: string) =>
  description.trim() === '' ? description : stripTags(description);

function titleErrors(title: string): Record<string, string[]> {
  const messages: string[] = [];
  if (title === '') messages.push("can't be blank");
  if (!/^[^,]+$/.test(title)) messages.push('is invalid');
  if ([...title].length > 255) messages.push('is too long (maximum is 255 characters)');
  return messages.length ? { title: messages } : {};
}

const colorErrors = (color: string | undefined): Record<string, string[]> =>
  color ? {} : { color: ['must be a valid color code'] };

function descriptionErrors(description: string | undefined): Record<string, string[]> {
  if (description === undefined || Buffer.byteLength(description) <= MAX_DESCRIPTION_BYTES) return {};
  return { description: [`is too long (maximum is ${MAX_DESCRIPTION_BYTES} characters)`] };
}
