import type { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import type { components, operations } from '../../generated/openapi.js';
import { whereGroupVisible, whereProjectVisible } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, badParameter, recordNotFound } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { stripTags } from '../core/html.js';
import { recordIds } from '../core/ids.js';
import { paginateOffset, type Page, type RequestInfo } from '../core/pagination.js';
import { containing } from '../core/search.js';
import { nextInternalId } from '../db/internal-ids.js';
import type { GroupView } from '../groups/groups.service.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import { Project } from '../projects/project.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { Milestone } from './milestone.entity.js';

type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;
export type ListProjectMilestonesParams = Query<'listProjectMilestones'>;
export type ListGroupMilestonesParams = Query<'listGroupMilestones'>;
export type CreateMilestoneParams = components['schemas']['MilestoneCreate'];
export type UpdateMilestoneParams = components['schemas']['MilestoneUpdate'];

/** A milestone with the path of its page under the server's URL (`group/project/-/milestones/3`). */
export interface MilestoneRecord {
  milestone: Milestone;
  webPath: string;
}

type Owner = { projectId: number } | { groupId: number };

const UPDATE_FIELDS = ['title', 'description', 'start_date', 'due_date', 'state_event'] as const;
const LAST_DATE = '9999-12-31';

/**
 * Project and group milestones. Titles are unique across a project and its group (exactly, case
 * included); a due date must come after the start date. Paths name a milestone by its global id.
 *
 * For other families (merge requests):
 * - `availableToProject(projectId, {id} | {title})`: a milestone the project may use (its own, or its
 *   group's or an ancestor group's), or null.
 * - `records(milestones)`: milestones with their page paths, for `presentMilestone`.
 */
/**
 * The path of the project or group that owns milestone `alias`, as its web path begins: for a read that
 * selects milestones with their paths in one statement.
 */
export const milestoneOwnerPathSql = (alias: string) => `CASE WHEN ${alias}.project_id IS NOT NULL
    THEN (SELECT pn.full_path || '/' || p.path FROM projects p JOIN namespaces pn ON pn.id = p.namespace_id
          WHERE p.id = ${alias}.project_id)
    ELSE 'groups/' || (SELECT g.full_path FROM namespaces g WHERE g.id = ${alias}.group_id) END`;

/** A milestone with its web path, from its owner's path (`milestoneOwnerPathSql`). */
export const milestoneRecord = (milestone: Milestone, ownerPath: string): MilestoneRecord => ({
  milestone,
  webPath: `${ownerPath}/-/milestones/${milestone.iid}`,
});

export class MilestonesService {
  private readonly dataSource: DataSource;

  constructor(deps: CoreDeps) {
    this.dataSource = deps.dataSource;
  }

  /** A milestone project `projectId` may use, by global id or exact title; null when there is none. */
  async availableToProject(
    projectId: number,
    by: { id: number } | { title: string },
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Milestone | null> {
    const rows: Array<{ ids: number[] }> = await manager.query(
      `SELECT CASE WHEN n.kind = 'group' THEN n.traversal_ids ELSE '{}'::int[] END AS ids
       FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = $1`,
      [projectId],
    );
    const query = this.scopedQuery({ projectIds: [projectId], groupIds: rows[0]?.ids ?? [] }, manager);
    if ('id' in by) query.andWhere('m.id = :id', { id: by.id });
    else query.andWhere('m.title = :title', { title: by.title });
    return query.getOne();
  }

  /** Milestones with their page paths, read in one query. */
  async records(
    milestones: Milestone[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<MilestoneRecord[]> {
    if (milestones.length === 0) return [];
    const rows: Array<{ id: number; path: string }> = await manager.query(
      `SELECT m.id, ${milestoneOwnerPathSql('m')} AS path FROM milestones m WHERE m.id = ANY($1::int[])`,
      [milestones.map((m) => m.id)],
    );
    const paths = new Map(rows.map((row) => [Number(row.id), row.path]));
    return milestones.map((milestone) => milestoneRecord(milestone, paths.get(milestone.id)!));
  }

  // --- Project milestones ---

  async listForProject(
    view: ProjectView,
    params: ListProjectMilestonesParams,
    request: RequestInfo,
  ): Promise<Page<MilestoneRecord>> {
    const ancestors = includeAncestors(params);
    const namespace = view.project.namespace;
    const groupIds = ancestors && namespace.kind === 'group' ? namespace.traversalIds : [];
    return this.list({ projectIds: [view.project.id], groupIds }, params, request);
  }

  async getForProject(view: ProjectView, id: number): Promise<MilestoneRecord> {
    return this.record(await this.find({ projectId: view.project.id }, id));
  }

  createForProject(view: ProjectView, params: CreateMilestoneParams): Promise<MilestoneRecord> {
    return this.create({ projectId: view.project.id }, params);
  }

  async updateForProject(
    view: ProjectView,
    id: number,
    params: UpdateMilestoneParams,
  ): Promise<MilestoneRecord> {
    return this.update(await this.find({ projectId: view.project.id }, id), params);
  }

  async removeFromProject(view: ProjectView, id: number): Promise<void> {
    const milestone = await this.find({ projectId: view.project.id }, id);
    await this.dataSource.getRepository(Milestone).delete(milestone.id);
  }

  // --- Group milestones ---

  async listForGroup(
    caller: Caller,
    { group }: GroupView,
    params: ListGroupMilestonesParams,
    request: RequestInfo,
  ): Promise<Page<MilestoneRecord>> {
    let groupIds = [group.id];
    if (includeAncestors(params) && group.traversalIds.length > 1)
      groupIds = await this.visibleGroups(caller, (q) =>
        q.where('g.id = ANY(:ancestors::int[])', { ancestors: group.traversalIds }),
      );
    let projectIds: number[] = [];
    if (params.include_descendants) {
      const descendants = await this.visibleGroups(caller, (q) =>
        q.where(`g.traversal_ids @> ARRAY[:groupId]::int[] AND g.id <> :groupId`, { groupId: group.id }),
      );
      groupIds = [...groupIds, ...descendants];
      const projects = this.dataSource
        .getRepository(Project)
        .createQueryBuilder('p')
        .innerJoin(Namespace, 'n', 'n.id = p.namespace_id')
        .select('p.id', 'id')
        .where('p.namespace_id = ANY(:namespaceIds::int[])', { namespaceIds: [group.id, ...descendants] });
      whereProjectVisible(projects, caller, 'p', 'n');
      projectIds = (await projects.getRawMany<{ id: number }>()).map((row) => Number(row.id));
    }
    return this.list({ projectIds, groupIds }, params, request);
  }

  async getForGroup({ group }: GroupView, id: number): Promise<MilestoneRecord> {
    return this.record(await this.find({ groupId: group.id }, id));
  }

  createForGroup({ group }: GroupView, params: CreateMilestoneParams): Promise<MilestoneRecord> {
    return this.create({ groupId: group.id }, params);
  }

  async updateForGroup(
    { group }: GroupView,
    id: number,
    params: UpdateMilestoneParams,
  ): Promise<MilestoneRecord> {
    return this.update(await this.find({ groupId: group.id }, id), params);
  }

  async removeFromGroup({ group }: GroupView, id: number): Promise<void> {
    const milestone = await this.find({ groupId: group.id }, id);
    await this.dataSource.getRepository(Milestone).delete(milestone.id);
  }

  // --- Shared rules ---

  private async list(
    scope: MilestoneScope,
    params: ListProjectMilestonesParams,
    request: RequestInfo,
  ): Promise<Page<MilestoneRecord>> {
    const query = this.scopedQuery(scope);
    const iids = recordIds(params.iids as Array<number | string> | undefined);
    if (params.iids !== undefined) query.andWhere('m.iid = ANY(:iids::int[])', { iids });
    if (params.state === 'active' || params.state === 'closed')
      query.andWhere('m.state = :state', { state: params.state });
    if (params.title !== undefined) query.andWhere('m.title = :title', { title: params.title });
    if (params.search)
      query.andWhere('(m.title ILIKE :term OR m.description ILIKE :term)', {
        term: containing(params.search),
      });
    if (params.updated_before) query.andWhere('m.updated_at < :before', { before: params.updated_before });
    if (params.updated_after) query.andWhere('m.updated_at > :after', { after: params.updated_after });
    const page = await paginateOffset(query, params, request);
    return { items: await this.records(page.items), headers: page.headers };
  }

  private async create(owner: Owner, params: CreateMilestoneParams): Promise<MilestoneRecord> {
    const title = cleanTitle(params.title);
    const startDate = castDate(params.start_date);
    const dueDate = castDate(params.due_date);
    const id = await this.dataSource.transaction(async (tx) => {
      const errors = {
        ...(await this.titleErrors(tx, owner, title, undefined)),
        ...dateErrors(startDate, dueDate),
      };
      if (Object.keys(errors).length > 0) throw failed('create', errors);
      const iid = await this.nextIid(tx, owner);
      const saved = await tx.getRepository(Milestone).save({
        iid,
        projectId: 'projectId' in owner ? owner.projectId : null,
        groupId: 'groupId' in owner ? owner.groupId : null,
        title,
        description: params.description ?? null,
        state: 'active',
        startDate,
        dueDate,
      });
      return saved.id;
    });
    return this.reload(id);
  }

  private async update(milestone: Milestone, params: UpdateMilestoneParams): Promise<MilestoneRecord> {
    if (!UPDATE_FIELDS.some((field) => params[field] !== undefined))
      throw badParameter(`${UPDATE_FIELDS.join(', ')} are missing, at least one parameter must be provided`);
    const owner: Owner =
      milestone.projectId !== null ? { projectId: milestone.projectId } : { groupId: milestone.groupId! };
    const changes: Partial<Milestone> = {};
    if (params.title !== undefined) changes.title = cleanTitle(params.title);
    if (params.description !== undefined) changes.description = params.description;
    if (params.start_date !== undefined) changes.startDate = castDate(params.start_date);
    if (params.due_date !== undefined) changes.dueDate = castDate(params.due_date);
    if (params.state_event === 'close') changes.state = 'closed';
    if (params.state_event === 'activate') changes.state = 'active';
    await this.dataSource.transaction(async (tx) => {
      const titleChanged = changes.title !== undefined && changes.title !== milestone.title;
      const errors = {
        ...(titleChanged ? await this.titleErrors(tx, owner, changes.title!, milestone.id) : {}),
        ...dateErrors(
          changes.startDate !== undefined ? changes.startDate : milestone.startDate,
          changes.dueDate !== undefined ? changes.dueDate : milestone.dueDate,
        ),
      };
      if (Object.keys(errors).length > 0) throw failed('update', errors);
      await tx.getRepository(Milestone).update(milestone.id, { ...changes, updatedAt: new Date() });
    });
    return this.reload(milestone.id);
  }

  /**
   * GitLab's title rules: present, and unused across a project and its group (a group milestone:
   * across the group and the projects directly in it). The owner's row is locked first, so that two
   * creations of one title cannot both pass.
   */
  private async titleErrors(
    tx: EntityManager,
    owner: Owner,
    title: string,
    exceptId: number | undefined,
  ): Promise<Record<string, string[]>> {
    if (title === '') return { title: ["can't be blank"] };
    if ([...title].length > 255) return { title: ['is too long (maximum is 255 characters)'] };
    let scope: MilestoneScope;
    if ('projectId' in owner) {
      const rows: Array<{ group_id: number | null }> = await tx.query(
        `SELECT CASE WHEN n.kind = 'group' THEN n.id END AS group_id
         FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = $1 FOR UPDATE OF p`,
        [owner.projectId],
      );
      const groupId = rows[0]?.group_id;
      scope = { projectIds: [owner.projectId], groupIds: groupId ? [Number(groupId)] : [] };
    } else {
      await tx.query('SELECT 1 FROM namespaces WHERE id = $1 FOR UPDATE', [owner.groupId]);
      const rows: Array<{ id: number }> = await tx.query('SELECT id FROM projects WHERE namespace_id = $1', [
        owner.groupId,
      ]);
      scope = { projectIds: rows.map((row) => Number(row.id)), groupIds: [owner.groupId] };
    }
    const query = this.scopedQuery(scope, tx).andWhere('m.title = :title', { title });
    if (exceptId !== undefined) query.andWhere('m.id <> :exceptId', { exceptId });
    return (await query.getExists())
      ? { title: ['already being used for another group or project milestone.'] }
      : {};
  }

  /** A project's next iid from its internal ids; a group's after its highest (its row is locked). */
  private async nextIid(tx: EntityManager, owner: Owner): Promise<number> {
    if ('projectId' in owner) return nextInternalId(tx, owner.projectId, 'milestones');
    const rows: Array<{ iid: number }> = await tx.query(
      'SELECT COALESCE(max(iid), 0) + 1 AS iid FROM milestones WHERE group_id = $1',
      [owner.groupId],
    );
    return Number(rows[0].iid);
  }

  private async find(owner: Owner, id: number): Promise<Milestone> {
    const milestone = await this.dataSource
      .getRepository(Milestone)
      .findOneBy('projectId' in owner ? { id, projectId: owner.projectId } : { id, groupId: owner.groupId });
    if (!milestone) throw recordNotFound();
    return milestone;
  }

  /** The milestone as saved; deleted meanwhile, as if it had not been found. */
  private async reload(id: number): Promise<MilestoneRecord> {
    const milestone = await this.dataSource.getRepository(Milestone).findOneBy({ id });
    if (!milestone) throw recordNotFound();
    return this.record(milestone);
  }

  private async record(milestone: Milestone): Promise<MilestoneRecord> {
    return (await this.records([milestone]))[0];
  }

  private scopedQuery(
    scope: MilestoneScope,
    manager: EntityManager = this.dataSource.manager,
  ): SelectQueryBuilder<Milestone> {
    return manager
      .getRepository(Milestone)
      .createQueryBuilder('m')
      .where('(m.project_id = ANY(:projectIds::int[]) OR m.group_id = ANY(:groupIds::int[]))', scope)
      .orderBy('m.due_date', 'ASC', 'NULLS LAST')
      .addOrderBy('lower(m.title)', 'ASC')
      .addOrderBy('m.id', 'ASC');
  }

  private async visibleGroups(
    caller: Caller,
    where: (query: SelectQueryBuilder<Namespace>) => SelectQueryBuilder<Namespace>,
  ): Promise<number[]> {
    const query = where(
      this.dataSource.getRepository(Namespace).createQueryBuilder('g').select('g.id', 'id'),
    );
    query.andWhere(`g.kind = 'group'`);
    whereGroupVisible(query, caller, 'g');
    return (await query.getRawMany<{ id: number }>()).map((row) => Number(row.id));
  }
}

interface MilestoneScope {
  projectIds: number[];
  groupIds: number[];
}

/** `include_ancestors`, or its former name; never both (Grape's `mutually_exclusive`). */
function includeAncestors(params: { include_ancestors?: boolean; include_parent_milestones?: boolean }) {
  if (params.include_ancestors !== undefined && params.include_parent_milestones !== undefined)
    throw badParameter('include_ancestors, include_parent_milestones are mutually exclusive');
  return params.include_ancestors ?? params.include_parent_milestones ?? false;
}

const cleanTitle = (title: string) => stripTags(title).trim();

/**
 * A date parameter as Rails casts it to a date column: `YYYY-MM-DD` (a time after it is ignored) that
 * names a real day; anything else is no date.
 */
export function castDate(value: string | undefined | null): string | null {
  if (value === undefined || value === null) return null;
  const match = /^\s*(\d{4,})-(\d{1,2})-(\d{1,2})(?:$|[T\s])/.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  // PostgreSQL has no year 0; a year beyond any calendar is no date either.
  if (year < 1 || year > 99_999) return null;
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day)
    return null;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** Dates compare as text once zero-padded; a five-digit year sorts after 9999 by length. */
const after = (a: string, b: string) => a.length > b.length || (a.length === b.length && a > b);

function dateErrors(startDate: string | null, dueDate: string | null): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (key: string, message: string) => (errors[key] ??= []).push(message);
  if (startDate && dueDate && !after(dueDate, startDate)) add('due_date', 'must be greater than start date');
  if (startDate && after(startDate, LAST_DATE)) add('start_date', 'date must not be after 9999-12-31');
  if (dueDate && after(dueDate, LAST_DATE)) add('due_date', 'date must not be after 9999-12-31');
  return errors;
}

/** GitLab's answer to a milestone that does not save: the errors as Ruby prints a hash, in a sentence. */
function failed(action: 'create' | 'update', errors: Record<string, string[]>): ApiError {
  const hash = Object.entries(errors)
    .map(([key, messages]) => `:${key}=>[${messages.map((m) => JSON.stringify(m)).join(', ')}]`)
    .join(', ');
  return new ApiError(400, { message: `Failed to ${action} milestone {${hash}}` });
}
