import { In, type DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import type { components, operations } from '../../generated/openapi.js';
import { authorizeGroup, groupSubject, whereGroupVisible, whereProjectVisible } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import {
  ApiError,
  badParameter,
  conflict,
  notFound,
  unauthorized,
  validationFailed,
} from '../core/errors.js';
import type { Contributions, CoreDeps } from '../core/family.js';
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
  /** The caller is subscribed to it where it is read: in the project, or at the group level. */
  subscribed: boolean;
}

/** Where labels are counted: a project's merge requests, or those of the projects in a group. */
export type LabelCountScope = { projectId: number } | { groupId: number };

/**
 * Counts per label id of what another family keeps (the merge requests family: open merge requests), over
 * what the caller may see in `scope`; counts nobody contributes are 0.
 */
export interface LabelCountsContribution {
  count(
    caller: Caller,
    labelIds: number[],
    scope: LabelCountScope,
  ): Promise<Map<number, Partial<LabelCounts>>>;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    labelCounts: LabelCountsContribution;
  }
}

const MAX_DESCRIPTION_BYTES = 512 * 1024;
/** GitLab's answer when a label cannot be promoted (the project is not in a group). */
const PROMOTE_FAILED = 'Failed to promote project label to group label';
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
 * - the `labelCounts` extension point: what `with_counts=true` shows, counted by the families that keep it.
 */
export class LabelsService {
  private readonly dataSource: DataSource;
  private readonly contributions: Contributions;

  constructor(deps: CoreDeps) {
    this.dataSource = deps.dataSource;
    this.contributions = deps.contributions;
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
    const records = await this.projectRecords(caller, page.items, view.project.id);
    if (params.with_counts) await this.addCounts(caller, records, { projectId: view.project.id });
    return { items: records, headers: page.headers };
  }

  async getForProject(
    caller: Caller,
    view: ProjectView,
    idOrTitle: string,
    includeAncestors = true,
  ): Promise<LabelRecord> {
    const label = await this.find(this.projectScope(view, includeAncestors), idOrTitle);
    return (await this.projectRecords(caller, [label], view.project.id))[0];
  }

  async createForProject(caller: Caller, view: ProjectView, params: CreateLabelParams): Promise<LabelRecord> {
    const label = await this.create(this.projectScope(view, true), { projectId: view.project.id }, params, {
      projectId: view.project.id,
      priority: params.priority,
    });
    return (await this.projectRecords(caller, [label], view.project.id))[0];
  }

  async updateForProject(
    caller: Caller,
    view: ProjectView,
    idOrTitle: string,
    params: UpdateLabelParams,
  ): Promise<LabelRecord> {
    requireOneOf(params, UPDATE_FIELDS);
    const label = await this.find(this.projectScope(view, false), idOrTitle);
    await this.update(label, params, view.project.id);
    return (await this.projectRecords(caller, [label], view.project.id))[0];
  }

  /** The older update: the label named by `label_id` or `name` in the body. */
  updateForProjectByName(
    caller: Caller,
    view: ProjectView,
    params: UpdateLabelByNameParams,
  ): Promise<LabelRecord> {
    return this.updateForProject(caller, view, selectorOf(params), params);
  }

  /**
   * Subscribes the caller to a label the project can use (its own or a group's), in this project; null
   * when nothing changes (already subscribed, or not subscribed when unsubscribing: GitLab's 304).
   */
  async setProjectSubscription(
    caller: Caller,
    view: ProjectView,
    idOrTitle: string,
    subscribed: boolean,
  ): Promise<LabelRecord | null> {
    const label = await this.find(this.projectScope(view, true), idOrTitle);
    if (!(await this.setSubscription(caller, label.id, view.project.id, subscribed))) return null;
    return (await this.projectRecords(caller, [label], view.project.id))[0];
  }

  /**
   * Makes one of the project's own labels a label of the project's group, keeping its id, as GitLab's
   * promotion: the labels of the same name in the group and in the group's projects are merged into it
   * (their merge request links, priorities and subscriptions move to it, then they are deleted).
   */
  async promote(caller: Caller, view: ProjectView, idOrTitle: string): Promise<LabelRecord> {
    const namespace = view.project.namespace;
    if (namespace.kind !== 'group') throw new ApiError(400, { message: PROMOTE_FAILED });
    authorizeGroup(caller, 'admin_label', await groupSubject(this.dataSource.manager, caller, namespace));
    const label = await this.find(this.projectScope(view, false), idOrTitle);
    const groupId = namespace.id;
    await this.dataSource.transaction(async (tx) => {
      // The label first, so that a concurrent promotion or rename of it waits for this one.
      const [locked] = (await tx.query('SELECT id FROM labels WHERE id = $1 AND project_id = $2 FOR UPDATE', [
        label.id,
        view.project.id,
      ])) as Array<{ id: number }>;
      if (!locked) throw notFound('Label');
      const merged = (
        (await tx.query(
          `SELECT l.id FROM labels l
           WHERE l.title = $1 AND l.id <> $2
             AND (l.group_id = $3 OR l.project_id IN (SELECT id FROM projects WHERE namespace_id = $3))
           FOR UPDATE`,
          [label.title, label.id, groupId],
        )) as Array<{ id: number }>
      ).map((row) => row.id);
      if (merged.length > 0) {
        await tx.query(
          `INSERT INTO merge_request_labels (merge_request_id, label_id)
           SELECT merge_request_id, $1 FROM merge_request_labels WHERE label_id = ANY($2::int[])
           ON CONFLICT DO NOTHING`,
          [label.id, merged],
        );
        // A project keeps its own priority for the label, else the first of the merged ones.
        await tx.query(
          `INSERT INTO label_priorities (project_id, label_id, priority)
           SELECT DISTINCT ON (project_id) project_id, $1, priority FROM label_priorities
           WHERE label_id = ANY($2::int[]) ORDER BY project_id, priority, id
           ON CONFLICT (project_id, label_id) DO NOTHING`,
          [label.id, merged],
        );
        await tx.query(
          `INSERT INTO label_subscriptions (label_id, user_id, project_id)
           SELECT $1, user_id, project_id FROM label_subscriptions WHERE label_id = ANY($2::int[])
           ON CONFLICT (label_id, user_id, COALESCE(project_id, 0)) DO NOTHING`,
          [label.id, merged],
        );
        // Their links, priorities and subscriptions go with them.
        await tx.query('DELETE FROM labels WHERE id = ANY($1::int[])', [merged]);
      }
      await tx.query('UPDATE labels SET project_id = NULL, group_id = $2, updated_at = now() WHERE id = $1', [
        label.id,
        groupId,
      ]);
    });
    const promoted = await this.dataSource.getRepository(Label).findOneByOrFail({ id: label.id });
    return (await this.groupRecords(caller, [promoted]))[0];
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
    const records = await this.groupRecords(caller, page.items);
    if (params.with_counts) await this.addCounts(caller, records, { groupId: view.group.id });
    return { items: records, headers: page.headers };
  }

  async getForGroup(
    caller: Caller,
    view: GroupView,
    idOrTitle: string,
    params: GetGroupLabelParams,
  ): Promise<LabelRecord> {
    const label = await this.find(await this.groupScope(caller, view, params), idOrTitle);
    return (await this.groupRecords(caller, [label]))[0];
  }

  async createForGroup(view: GroupView, params: CreateLabelParams): Promise<LabelRecord> {
    const scope: LabelScope = { projectIds: [], groupIds: view.group.traversalIds };
    const label = await this.create(scope, { groupId: view.group.id }, params, {});
    return { label, priority: null, subscribed: false };
  }

  async updateForGroup(
    caller: Caller,
    view: GroupView,
    idOrTitle: string,
    params: UpdateLabelParams,
  ): Promise<LabelRecord> {
    requireOneOf(params, GROUP_UPDATE_FIELDS);
    const label = await this.find({ projectIds: [], groupIds: [view.group.id] }, idOrTitle);
    await this.update(label, params, undefined);
    return (await this.groupRecords(caller, [label]))[0];
  }

  updateForGroupByName(
    caller: Caller,
    view: GroupView,
    params: UpdateLabelByNameParams,
  ): Promise<LabelRecord> {
    return this.updateForGroup(caller, view, selectorOf(params), params);
  }

  /** Subscribes the caller to a label of the group or its ancestors, at the group level; null as for projects. */
  async setGroupSubscription(
    caller: Caller,
    view: GroupView,
    idOrTitle: string,
    subscribed: boolean,
  ): Promise<LabelRecord | null> {
    const label = await this.find({ projectIds: [], groupIds: view.group.traversalIds }, idOrTitle);
    if (!(await this.setSubscription(caller, label.id, null, subscribed))) return null;
    return (await this.groupRecords(caller, [label]))[0];
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

  /** A page of labels as a project shows them: its priorities and the caller's subscriptions, two queries. */
  private async projectRecords(caller: Caller, labels: Label[], projectId: number): Promise<LabelRecord[]> {
    const priorities = labels.length
      ? await this.dataSource
          .getRepository(LabelPriority)
          .findBy({ projectId, labelId: In(labels.map((label) => label.id)) })
      : [];
    const byLabel = new Map(priorities.map((p) => [p.labelId, p.priority]));
    const subscribed = await this.subscribedTo(caller, labels, projectId);
    return labels.map((label) => ({
      label,
      priority: byLabel.get(label.id) ?? null,
      subscribed: subscribed.has(label.id),
    }));
  }

  /** A page of labels as a group shows them: the caller's group-level subscriptions. */
  private async groupRecords(caller: Caller, labels: Label[]): Promise<LabelRecord[]> {
    const subscribed = await this.subscribedTo(caller, labels, null);
    return labels.map((label) => ({ label, priority: null, subscribed: subscribed.has(label.id) }));
  }

  /** Which of `labels` the caller is subscribed to in project `projectId` (null: at the group level). */
  private async subscribedTo(
    caller: Caller,
    labels: Label[],
    projectId: number | null,
  ): Promise<Set<number>> {
    if (!caller.user || labels.length === 0) return new Set();
    const rows = (await this.dataSource.query(
      `SELECT label_id FROM label_subscriptions
       WHERE user_id = $1 AND label_id = ANY($2::int[]) AND project_id IS NOT DISTINCT FROM $3::int`,
      [caller.user.id, labels.map((label) => label.id), projectId],
    )) as Array<{ label_id: number }>;
    return new Set(rows.map((row) => row.label_id));
  }

  /**
   * Subscribes or unsubscribes the caller at one level; false when it already was as asked. A change also
   * drops the caller's subscriptions to the label at the other level (a project's and the group's), as
   * GitLab's `unsubscribe_from_other_levels`.
   */
  private async setSubscription(
    caller: Caller,
    labelId: number,
    projectId: number | null,
    subscribe: boolean,
  ): Promise<boolean> {
    const user = caller.user;
    if (!user) throw unauthorized();
    return this.dataSource.transaction(async (tx) => {
      const current = (await tx.query(
        `SELECT id FROM label_subscriptions
         WHERE label_id = $1 AND user_id = $2 AND project_id IS NOT DISTINCT FROM $3::int FOR UPDATE`,
        [labelId, user.id, projectId],
      )) as Array<{ id: number }>;
      if (subscribe === current.length > 0) return false;
      await tx.query(
        `DELETE FROM label_subscriptions WHERE label_id = $1 AND user_id = $2
         AND ${projectId === null ? 'project_id IS NOT NULL' : 'project_id IS NULL'}`,
        [labelId, user.id],
      );
      if (subscribe)
        // A concurrent subscription of the same caller wins; the answer is the same.
        await tx.query(
          `INSERT INTO label_subscriptions (label_id, user_id, project_id) VALUES ($1, $2, $3)
           ON CONFLICT (label_id, user_id, COALESCE(project_id, 0)) DO NOTHING`,
          [labelId, user.id, projectId],
        );
      else await tx.query('DELETE FROM label_subscriptions WHERE id = $1', [current[0].id]);
      return true;
    });
  }

  private async addCounts(caller: Caller, records: LabelRecord[], scope: LabelCountScope): Promise<void> {
    const ids = records.map((record) => record.label.id);
    const counted = new Map<number, Partial<LabelCounts>>();
    if (ids.length > 0)
      for (const contribution of this.contributions.of('labelCounts'))
        for (const [id, counts] of await contribution.count(caller, ids, scope))
          counted.set(id, { ...counted.get(id), ...counts });
    for (const record of records)
      // forge-api has no issues yet: nobody counts them.
      record.counts = {
        open_issues_count: 0,
        closed_issues_count: 0,
        open_merge_requests_count: 0,
        ...counted.get(record.label.id),
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
