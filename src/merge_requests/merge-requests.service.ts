import { randomUUID } from 'node:crypto';
import { In, type DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import {
  canProject,
  projectAccess,
  projectAccessLevels,
  projectSubject,
  Visibility,
  whereMergeRequestsReadable,
} from '../core/abilities.js';
import { canRecheckMergeStatus, canUpdateMergeRequest } from './abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, badParameter, forbidden, recordNotFound, validationFailed } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import {
  boundedOffsetHeaders,
  MAX_COUNTED_ITEMS,
  offsetHeaders,
  perPageOf,
  type Page,
  type RequestInfo,
} from '../core/pagination.js';
import { readableProjectIds, uncachedIds, type ReadableIds } from '../core/readable-projects.js';
import { containing } from '../core/search.js';
import { isUniqueViolation } from '../db/errors.js';
import { nextInternalId } from '../db/internal-ids.js';
import { preparedQuery } from '../db/prepared.js';
import { entityRows, type EntityRows } from '../db/rows.js';
import { EMPTY_TREE, type DiffResult } from '../git/diffs.js';
import type { GitCommit, GitRepository } from '../git/repository.js';
import type { GroupView } from '../groups/groups.service.js';
import { Label } from '../labels/label.entity.js';
import type { LabelCountScope } from '../labels/labels.service.js';
import {
  milestoneOwnerPathSql,
  milestoneRecord,
  type MilestoneRecord,
} from '../milestones/milestones.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import { projectSettings } from '../projects/project-settings.js';
import {
  recordLabelChanges,
  recordMilestoneChange,
  recordStateChange,
  type EventOrigin,
} from '../resource_events/record.js';
import { User } from '../users/user.entity.js';
import { parseDuration } from './durations.js';
import { MergeRequestListCounts } from './list-counts.js';
import { MergeRequestListPages } from './list-pages.js';
import { Milestone } from '../milestones/milestone.entity.js';
import { MergeRequest, MergeRequestDiff } from './merge-request.entity.js';
// Below the service, so that the list's pages and counts, which the service uses, can name them too.
import type {
  ListMergeRequestsParams,
  MergeRequestProject,
  MergeRequestRecords,
} from './merge-request-records.js';
import type { MergeRequestVersions } from './merge-request-versions.js';
import { isDraftTitle, stripDraft } from './merge-request-text.js';
import type { MergeRequestChanged } from './merge-requests.events.js';

export type { ListMergeRequestsParams, MergeRequestProject, MergeRequestRecords };
export type CreateMergeRequestParams = components['schemas']['MergeRequestCreate'];
export type UpdateMergeRequestParams = components['schemas']['MergeRequestUpdate'];
type PageParams = { page?: number; per_page?: number };

/**
 * What the merge request approvals family adds (registered by it, so this family names none of it): rules
 * copied at creation, the approvals each merge request lacks, and the approval list filters.
 */
export interface MergeRequestApprovalHooks {
  created(
    tx: EntityManager,
    mr: { id: number; targetProjectId: number; targetBranch: string },
  ): Promise<void>;
  /**
   * SQL selecting `[merge request id, approvals left]` pairs (a JSON array) for the open merge requests
   * the int[] expression `openIds` names; null when nothing ever lacks approvals.
   */
  approvalsLeftSql(openIds: string): string | null;
  applyListFilters(query: SelectQueryBuilder<MergeRequest>, params: ListMergeRequestsParams): void;
}

/** What only the single read adds. */
export interface MergeRequestDetails {
  diff: MergeRequestDiff | null;
  canMerge: boolean;
  firstContribution: boolean;
  divergedCommitsCount: number;
}

/** File diffs and which of their paths are generated files. */
export interface VersionDiffs extends DiffResult {
  generated: Set<string>;
}

export interface MergeRequestDetailRecords extends MergeRequestRecords {
  details: MergeRequestDetails;
}

const UPDATE_KEYS = [
  'add_labels',
  'allow_collaboration',
  'allow_maintainer_to_push',
  'assignee_id',
  'assignee_ids',
  'description',
  'discussion_locked',
  'labels',
  'merge_after',
  'milestone_id',
  'remove_labels',
  'remove_source_branch',
  'reviewer_ids',
  'squash',
  'state_event',
  'target_branch',
  'title',
] as const;

const ORDER_COLUMNS: Record<string, string> = {
  created_at: 'mr.created_at',
  updated_at: 'mr.updated_at',
  title: 'mr.title',
  merged_at: 'mr.merged_at',
};

const isNone = (value: unknown) => typeof value === 'string' && value.toLowerCase() === 'none';
const isAny = (value: unknown) => typeof value === 'string' && value.toLowerCase() === 'any';

/**
 * Everything a page of merge requests is presented with, by ids: the merge requests, the users they
 * name (author, closer, merger), their projects, their milestones; `approvals` selects the approvals the
 * open ones lack. Rows come as JSON arrays (whole rows for users, labels and milestones), each aggregate
 * ordered as it is shown.
 */
function relatedSql(
  ids: string,
  users: string,
  projects: string,
  milestones: string,
  approvals: string | null,
) {
  return {
    ctes: `links AS (
      SELECT 'a' AS kind, merge_request_id, user_id FROM merge_request_assignees
      WHERE merge_request_id = ANY(${ids})
      UNION ALL
      SELECT 'r' AS kind, merge_request_id, user_id FROM merge_request_reviewers
      WHERE merge_request_id = ANY(${ids})
    ), labelled AS (
      SELECT mrl.merge_request_id, l.id, l.title FROM merge_request_labels mrl
      JOIN labels l ON l.id = mrl.label_id WHERE mrl.merge_request_id = ANY(${ids})
    )`,
    columns: `
      (SELECT json_agg(json_build_array(kind, merge_request_id, user_id) ORDER BY user_id) FROM links) AS links,
      (SELECT json_agg(u) FROM users u
       WHERE u.id IN (SELECT unnest(${users}) UNION SELECT user_id FROM links)) AS users,
      (SELECT json_agg(json_build_array(p.id, n.full_path || '/' || p.path, p.settings))
       FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = ANY(${projects})) AS projects,
      (SELECT json_agg(json_build_array(noteable_id, count, unresolved)) FROM (
         SELECT noteable_id, count(*)::int AS count, bool_or(type IS NOT NULL AND resolved_at IS NULL) AS unresolved
         FROM notes WHERE noteable_id = ANY(${ids}) AND NOT system GROUP BY noteable_id) c) AS notes,
      (SELECT json_agg(json_build_array(merge_request_id, id) ORDER BY title COLLATE "C", id) FROM labelled) AS labels,
      (SELECT json_agg(l) FROM labels l WHERE l.id IN (SELECT id FROM labelled)) AS label_rows,
      (SELECT json_agg(json_build_array(m, ${milestoneOwnerPathSql('m')}))
       FROM milestones m WHERE m.id = ANY(${milestones})) AS milestones,
      (SELECT json_agg(json_build_array(merge_request_id, up, down)) FROM (
         SELECT merge_request_id, count(*) FILTER (WHERE name = 'thumbsup')::int AS up,
           count(*) FILTER (WHERE name = 'thumbsdown')::int AS down
         FROM award_emoji WHERE merge_request_id = ANY(${ids}) AND note_id IS NULL
           AND name IN ('thumbsup', 'thumbsdown') GROUP BY merge_request_id) v) AS votes,
      ${approvals ?? 'NULL'} AS approvals_left`,
  };
}

/**
 * Given the ids: $1 the merge requests, $2 the users they name, $3 their projects, $4 their milestones,
 * and with approvals, $5 the open merge requests.
 */
const relatedByIdsSql = (hooks: MergeRequestApprovalHooks | null) => {
  const approvals = hooks?.approvalsLeftSql('$5::int[]') ?? null;
  const related = relatedSql('$1::int[]', '$2::int[]', '$3::int[]', '$4::int[]', approvals);
  return { sql: `WITH ${related.ctes} SELECT ${related.columns}`, open: approvals !== null };
};

/**
 * A list's page (`page`, selected as `mr_<column>`) with what `related` loads, from the page itself, and
 * the capped count unless it is known (with the readable projects it counted, to keep it): one
 * statement, one row.
 */
/**
 * The rows up to a page's end, bounded by a literal in the statement: with a parameter alone, the
 * generic plan of the prepared statement assumes a tenth of all rows and sorts them, so PostgreSQL
 * plans it anew at every call (costlier than running it). A power of two (32 at least): few texts.
 */
const pageBound = (rows: number) => 2 ** Math.max(5, Math.ceil(Math.log2(rows)));

const listSql = (
  hooks: MergeRequestApprovalHooks | null,
  pageSql: string,
  count: { sql: string; withProjects: boolean } | null,
  order: string,
  bound: number,
  readable?: ReadableIds,
) => {
  const related = relatedSql(
    '(SELECT ids FROM keys)::int[]',
    '(SELECT users FROM keys)::int[]',
    '(SELECT projects FROM keys)::int[]',
    '(SELECT milestones FROM keys)::int[]',
    hooks?.approvalsLeftSql('(SELECT open FROM keys)::int[]') ?? null,
  );
  return `
  WITH ${readable ? `readable AS (SELECT ${readable.sql} AS ids),` : ''}
  page AS MATERIALIZED (SELECT * FROM (${pageSql} LIMIT ${bound}) bounded
    ORDER BY ${order} LIMIT :pageLimit OFFSET :pageOffset),
  keys AS (
    SELECT array_agg(mr_id) AS ids, array_agg(DISTINCT mr_target_project_id) AS projects,
      array_agg(DISTINCT mr_milestone_id) FILTER (WHERE mr_milestone_id IS NOT NULL) AS milestones,
      array_agg(mr_id) FILTER (WHERE mr_state = 'opened') AS open,
      (SELECT array_agg(DISTINCT u) FROM page, unnest(ARRAY[mr_author_id, mr_closed_by_id, mr_merge_user_id]) u
       WHERE u IS NOT NULL) AS users
    FROM page
  ), ${related.ctes}
  SELECT (SELECT json_agg(page ORDER BY ${order}) FROM page) AS items,${readable ? ` ${readable.heldSql} AS readable_held,` : ''}
    ${count ? `(SELECT count(*)::int FROM (${count.sql}) counted)` : 'NULL::int'} AS counted,${
      count?.withProjects && readable ? ' (SELECT ids FROM readable) AS counted_projects,' : ''
    } ${related.columns}`;
};

/**
 * Everything a page of merge requests is presented with. Rows come as JSON arrays (whole rows for
 * users, labels and milestones), each aggregate ordered as it is shown.
 */
interface RelatedRow {
  links: Array<[string, number, number]> | null;
  users: Array<Record<string, unknown>> | null;
  projects: Array<[number, string, Record<string, unknown> | null]> | null;
  notes: Array<[number, number, boolean]> | null;
  labels: Array<[number, number]> | null;
  label_rows: Array<Record<string, unknown>> | null;
  milestones: Array<[Record<string, unknown>, string]> | null;
  votes: Array<[number, number, number]> | null;
  approvals_left: Array<[number, number]> | null;
}

/** Where a list looks: one project, the projects of a group, or the whole instance. */
export type ListScope = { project: ProjectView } | { group: GroupView } | { instance: true };

export class MergeRequestsService {
  private readonly dataSource: DataSource;
  private readonly events: Events;
  private readonly mergeRequestRows: EntityRows<MergeRequest>;
  private readonly userRows: EntityRows<User>;
  private readonly labelRows: EntityRows<Label>;
  private readonly milestoneRows: EntityRows<Milestone>;
  private readonly listCounts: MergeRequestListCounts;
  /** Projects' list pages as answered, until a change to what they show. */
  readonly listPages: MergeRequestListPages;
  private approvalHooks: MergeRequestApprovalHooks | null = null;
  /** `relatedByIdsSql` once the approvals family has registered (or not). */
  private relatedByIds: ReturnType<typeof relatedByIdsSql> | undefined;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<
      ServiceRegistry,
      'repositories' | 'mergeRequestVersions' | 'labels' | 'milestones' | 'projects' | 'protectedRefs'
    >,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
    this.mergeRequestRows = entityRows(this.dataSource, MergeRequest, 'mr');
    this.userRows = entityRows(this.dataSource, User, 'u');
    this.labelRows = entityRows(this.dataSource, Label, 'l');
    this.milestoneRows = entityRows(this.dataSource, Milestone, 'm');
    this.listCounts = new MergeRequestListCounts(this.dataSource);
    this.listPages = new MergeRequestListPages(this.dataSource);
    services.labels.countOpenMergeRequestsWith((caller, labelIds, scope) =>
      this.countOpenWithLabels(caller, labelIds, scope),
    );
  }

  /** Open merge requests per label, over the projects of `scope` whose merge requests the caller may read. */
  private async countOpenWithLabels(
    caller: Caller,
    labelIds: number[],
    scope: LabelCountScope,
  ): Promise<Map<number, number>> {
    const query = this.dataSource
      .createQueryBuilder()
      .select('mrl.label_id', 'label_id')
      .addSelect('count(*)::int', 'count')
      .from('merge_request_labels', 'mrl')
      .innerJoin('merge_requests', 'mr', 'mr.id = mrl.merge_request_id')
      .innerJoin('projects', 'p', 'p.id = mr.target_project_id')
      .innerJoin('namespaces', 'n', 'n.id = p.namespace_id')
      .where('mrl.label_id = ANY(:labelIds::int[])', { labelIds })
      .andWhere(`mr.state = 'opened'`)
      .groupBy('mrl.label_id');
    if ('projectId' in scope) query.andWhere('mr.target_project_id = :projectId', scope);
    else query.andWhere('n.traversal_ids @> ARRAY[:groupId]::int[]', scope);
    whereMergeRequestsReadable(query, caller, 'p', 'n');
    const rows = await query.getRawMany<{ label_id: number; count: number }>();
    return new Map(rows.map((row) => [Number(row.label_id), Number(row.count)]));
  }

  /** Called once by the approvals family when it is built. */
  useApprovals(hooks: MergeRequestApprovalHooks): void {
    this.approvalHooks = hooks;
  }

  private get versions(): MergeRequestVersions {
    return this.services.mergeRequestVersions;
  }

  /** Merge requests turned off in the project answer 403, as GitLab's `read_merge_request` does. */
  assertEnabled(view: ProjectView): void {
    if (!projectSettings(view.project.settings).merge_requests_enabled) throw forbidden();
  }

  // ---- lists ----

  async list(
    caller: Caller,
    where: ListScope,
    params: ListMergeRequestsParams,
    request: RequestInfo,
  ): Promise<Page<MergeRequest> & MergeRequestRecords> {
    exclusive(params, 'author_id', 'author_username');
    exclusive(params, 'merge_user_id', 'merge_user_username');
    exclusive(params, 'reviewer_id', 'reviewer_username');
    const query = this.dataSource.getRepository(MergeRequest).createQueryBuilder('mr');
    let readable: ReadableIds | undefined;
    if ('project' in where) {
      // The pipeline authorized the project: no join to decide visibility.
      this.assertEnabled(where.project);
      query.where('mr.target_project_id = :projectId', { projectId: where.project.project.id });
    } else {
      // The readable projects are decided once for the page and its count, as an array (`readable`
      // in listSql): joined, the planner pairs every merge request it walks with the projects again.
      // A member's set is stored per user while it holds (see readableProjectIds).
      readable = this.readableProjects(caller, 'group' in where ? where.group.group.id : undefined);
      query
        .where('mr.target_project_id = ANY((SELECT ids FROM readable)::int[])')
        .setParameters(readable.parameters);
    }
    const scope = (params.scope ?? ('instance' in where ? 'created_by_me' : 'all')).replace(/-/g, '_');
    const me = caller.user?.id ?? 0;
    if (scope === 'created_by_me') query.andWhere('mr.author_id = :me', { me });
    if (scope === 'assigned_to_me') query.andWhere(exists('merge_request_assignees', ':me'), { me });
    if (scope === 'reviews_for_me') query.andWhere(exists('merge_request_reviewers', ':me'), { me });
    let labels: LabelUniverse | null = null;
    if ('project' in where) {
      const namespace = where.project.project.namespace;
      labels = {
        projectId: where.project.project.id,
        groupIds: namespace.kind === 'group' ? namespace.traversalIds : [],
      };
    }
    applyFilters(query, params, labels);
    applyReactionFilters(query, params, caller.user?.id);
    this.approvalHooks?.applyListFilters(query, params);

    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const direction = params.sort === 'asc' ? 'ASC' : 'DESC';
    const column = ORDER_COLUMNS[params.order_by ?? 'created_at'];
    const nulls = column === 'mr.merged_at' ? 'NULLS LAST' : undefined;
    // Counted up to GitLab's limit only: beyond it the totals are left out (boundedOffsetHeaders).
    const counting = query
      .clone()
      .select('1', 'one')
      .limit(MAX_COUNTED_ITEMS + 1);
    const paging = query
      .select(this.mergeRequestRows.select)
      .orderBy(column, direction, nulls)
      .addOrderBy('mr.id', direction);
    const countSql = counting.getQuery();
    const countKey = this.listCounts.keyOf(
      params,
      `${readable?.sql ?? ''}\n${countSql}`,
      counting.getParameters(),
    );
    const knownCount = this.listCounts.get(countKey);
    const mark = this.listCounts.mark();
    // One prepared statement for the page, its count and its related records; the text depends only
    // on which filters are set, so each shape is planned once per connection.
    const [sql, values] = this.dataSource.driver.escapeQueryWithParameters(
      listSql(
        this.approvalHooks,
        paging.getQuery(),
        knownCount === undefined ? { sql: countSql, withProjects: countKey !== undefined } : null,
        `${column.replace('.', '_')} ${direction}${nulls ? ` ${nulls}` : ''}, mr_id ${direction}`,
        pageBound(page * perPage + 1),
        readable,
      ),
      { ...query.getParameters(), pageLimit: perPage + 1, pageOffset: (page - 1) * perPage },
    );
    const [row] = await preparedQuery<
      RelatedRow & {
        items: Array<Record<string, unknown>> | null;
        counted: number | null;
        counted_projects?: number[] | null;
        readable_held?: boolean;
      }
    >(this.dataSource, sql, values);
    await readable?.settle(row.readable_held);
    const counted = knownCount ?? row.counted!;
    if (countKey !== undefined && knownCount === undefined) {
      const projects = 'project' in where ? [where.project.project.id] : (row.counted_projects ?? []);
      this.listCounts.set(countKey, params, counted, projects, mark);
    }
    const total = counted > MAX_COUNTED_ITEMS ? null : counted;
    const rows = (row.items ?? []).map((json) => this.mergeRequestRows.hydrate(json)!);
    const items = rows.slice(0, perPage);
    const records = await this.recordsOf(this.dataSource.manager, items, row);
    records.withLabelsDetails = params.with_labels_details === true;
    if (params.with_merge_status_recheck)
      await this.recheck(caller, items, 'project' in where ? where.project : null);
    return {
      ...records,
      headers: boundedOffsetHeaders(total, rows.length > perPage, page, perPage, request),
    };
  }

  /** The projects whose merge requests the caller may read, of a group or the instance, as an int[]. */
  private readableProjects(caller: Caller, groupId: number | undefined): ReadableIds {
    if (caller.user && !caller.user.admin)
      return readableProjectIds(this.dataSource, { ...caller, user: caller.user }, 'merge_requests', groupId);
    const query = this.dataSource
      .createQueryBuilder()
      .select('p.id')
      .from('projects', 'p')
      .innerJoin('namespaces', 'n', 'n.id = p.namespace_id');
    if (groupId !== undefined) query.where('n.traversal_ids @> ARRAY[:groupId]::int[]', { groupId });
    whereMergeRequestsReadable(query, caller, 'p', 'n');
    return uncachedIds(query);
  }

  /** Queues checks for the caller's page, for those allowed to ask (Developer and above in each project). */
  private async recheck(caller: Caller, items: MergeRequest[], view: ProjectView | null): Promise<void> {
    const open = items.filter((mr) => mr.state === 'opened');
    // Every project of the page in one query when the list spans projects.
    const levels = view
      ? null
      : await projectAccessLevels(this.dataSource.manager, caller, [
          ...new Set(open.map((mr) => mr.targetProjectId)),
        ]);
    const allowed = open.filter((mr) =>
      canRecheckMergeStatus(caller, view ? view.accessLevel : (levels!.get(mr.targetProjectId)?.level ?? 0)),
    );
    if (allowed.length === 0) return;
    await this.dataSource.transaction(async (tx) => {
      for (const mr of allowed) {
        await tx
          .getRepository(MergeRequest)
          .update({ id: mr.id, mergeStatus: 'can_be_merged' }, { mergeStatus: 'unchecked' });
        await tx
          .getRepository(MergeRequest)
          .update({ id: mr.id, mergeStatus: 'cannot_be_merged' }, { mergeStatus: 'unchecked' });
        await this.versions.requestCheck(tx, mr.id);
      }
    });
  }

  /**
   * Projects, users, assignees, reviewers, note counts, labels and milestones of a page: one statement
   * whatever the page's size (and one more for the milestones' paths when the page has milestones).
   */
  async related(manager: EntityManager, items: MergeRequest[]): Promise<MergeRequestRecords> {
    const ids = items.map((mr) => mr.id);
    const userIds = new Set<number>();
    for (const mr of items)
      for (const id of [mr.authorId, mr.closedById, mr.mergeUserId]) if (id !== null) userIds.add(id);
    const projectIds = [...new Set(items.map((mr) => mr.targetProjectId))];
    const milestoneIds = [
      ...new Set(items.flatMap((mr) => (mr.milestoneId === null ? [] : [mr.milestoneId]))),
    ];
    const { sql, open } = (this.relatedByIds ??= relatedByIdsSql(this.approvalHooks));
    const values: unknown[] = [ids, [...userIds], projectIds, milestoneIds];
    if (open) values.push(items.filter((mr) => mr.state === 'opened').map((mr) => mr.id));
    const [row] =
      manager === this.dataSource.manager
        ? await preparedQuery<RelatedRow>(this.dataSource, sql, values)
        : ((await manager.query(sql, values)) as RelatedRow[]);
    return this.recordsOf(manager, items, row);
  }

  /** The records of a page from the JSON `relatedSql` selects (and the milestones' paths). */
  private async recordsOf(
    manager: EntityManager,
    items: MergeRequest[],
    row: RelatedRow,
  ): Promise<MergeRequestRecords> {
    const assignees = new Map<number, number[]>();
    const reviewers = new Map<number, number[]>();
    for (const [kind, mergeRequestId, userId] of row.links ?? []) {
      const map = kind === 'a' ? assignees : reviewers;
      map.set(mergeRequestId, [...(map.get(mergeRequestId) ?? []), userId]);
    }
    const users = new Map<number, User>();
    for (const json of row.users ?? []) {
      const user = this.userRows.fromJson(json);
      users.set(user.id, user);
    }
    const projects = new Map<number, MergeRequestProject>();
    for (const [id, fullPath, stored] of row.projects ?? []) {
      const settings = projectSettings(stored ?? {});
      projects.set(id, {
        id,
        fullPath,
        squashOption: settings.squash_option,
        mergeMethod: settings.merge_method,
        onlyAllowMergeIfAllDiscussionsAreResolved: settings.only_allow_merge_if_all_discussions_are_resolved,
      });
    }
    // User notes and unresolved threads (resolvable notes: not system, in a thread).
    const userNotesCounts = new Map<number, number>();
    const unresolvedDiscussions = new Set<number>();
    for (const [noteableId, count, unresolved] of row.notes ?? []) {
      userNotesCounts.set(noteableId, count);
      if (unresolved) unresolvedDiscussions.add(noteableId);
    }
    const labelsById = new Map<number, Label>();
    for (const json of row.label_rows ?? []) {
      const label = this.labelRows.fromJson(json);
      labelsById.set(label.id, label);
    }
    const labels = new Map<number, Label[]>();
    for (const [mergeRequestId, labelId] of row.labels ?? []) {
      const label = labelsById.get(labelId);
      if (label) labels.set(mergeRequestId, [...(labels.get(mergeRequestId) ?? []), label]);
    }
    const milestones = new Map<number, MilestoneRecord>();
    for (const [json, ownerPath] of row.milestones ?? []) {
      const milestone = this.milestoneRows.fromJson(json);
      milestones.set(milestone.id, milestoneRecord(milestone, ownerPath));
    }
    // Upvotes and downvotes: `thumbsup` and `thumbsdown` on the merge request itself.
    const votes = new Map<number, { up: number; down: number }>();
    for (const [mergeRequestId, up, down] of row.votes ?? []) votes.set(mergeRequestId, { up, down });
    return {
      items,
      projects,
      users,
      assignees,
      reviewers,
      userNotesCounts,
      unresolvedDiscussions,
      labels,
      milestones,
      collaboration: await collaborationOf(manager, items),
      votes,
      approvalsLeft: new Map(row.approvals_left ?? []),
    };
  }

  // ---- one merge request ----

  /** The merge request `iid` of the project: 404 `Not found` when there is none. */
  async find(
    view: ProjectView,
    iid: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<MergeRequest> {
    this.assertEnabled(view);
    const mr = await manager.getRepository(MergeRequest).findOneBy({ targetProjectId: view.project.id, iid });
    if (!mr) throw recordNotFound();
    return mr;
  }

  async get(
    caller: Caller,
    view: ProjectView,
    iid: number,
    recheck = false,
  ): Promise<MergeRequestDetailRecords> {
    const mr = await this.find(view, iid);
    if (recheck) await this.recheck(caller, [mr], view);
    return this.detail(caller, view, mr.id);
  }

  private async detail(caller: Caller, view: ProjectView, id: number): Promise<MergeRequestDetailRecords> {
    const mr = await this.dataSource.getRepository(MergeRequest).findOneByOrFail({ id });
    const records = await this.related(this.dataSource.manager, [mr]);
    const diff = (await this.versions.latest(this.dataSource.manager, [mr.id])).get(mr.id) ?? null;
    const { git } = this.services.repositories.open(view);
    let canMerge = false;
    if (caller.user) {
      const actor = await this.services.protectedRefs.actor(caller, view.accessLevel);
      canMerge = await this.services.protectedRefs.mayMerge(view.project.id, actor, mr.targetBranch);
    }
    const [earlier] = (await this.dataSource.query(
      `SELECT 1 FROM merge_requests WHERE target_project_id = $1 AND author_id = $2 AND state = 'merged'
         AND id <> $3 AND ($4::timestamptz IS NULL OR merged_at < $4) LIMIT 1`,
      [view.project.id, mr.authorId, mr.id, mr.mergedAt],
    )) as unknown[];
    let divergedCommitsCount = 0;
    if (mr.state === 'opened' && diff) {
      const target = await git.resolveCommit(`refs/heads/${mr.targetBranch}`);
      if (target) divergedCommitsCount = await git.countCommits(diff.headCommitSha, target);
    }
    return {
      ...records,
      details: { diff, canMerge, firstContribution: !earlier, divergedCommitsCount },
    };
  }

  // ---- writes ----

  /**
   * Opens a merge request from a branch of `view` (the source) into a branch of the target project: the
   * project itself, or another project of its fork network (`target_project_id`), chosen as GitLab's
   * BuildService does. It belongs to the target, which numbers it and holds its head ref.
   */
  async create(
    caller: Caller,
    view: ProjectView,
    params: CreateMergeRequestParams,
  ): Promise<MergeRequestDetailRecords> {
    this.assertEnabled(view);
    const target = await this.targetOf(caller, view, params.target_project_id);
    const crossProject = target.project.id !== view.project.id;
    if (crossProject && !(await this.inForkNetwork(view.project.id, target.project.id)))
      throw new ApiError(422, { message: ['Source project is not a fork of the target project'] });
    if (!crossProject && params.source_branch === params.target_branch)
      throw new ApiError(422, { message: ["You can't use same project/branch for source and target"] });
    const sourceGit = this.services.repositories.open(view).git;
    const { git } = this.services.repositories.open(target);
    const [source, targetBranch] = await Promise.all([
      sourceGit.branch(params.source_branch),
      git.branch(params.target_branch),
    ]);
    const missing: Record<string, string[]> = {};
    if (!source) missing.source_branch = ['does not exist'];
    if (!targetBranch) missing.target_branch = ['does not exist'];
    if (!source || !targetBranch) throw validationFailed(missing);
    const pair = { sourceProjectId: view.project.id, targetProjectId: target.project.id };
    await this.refuseDuplicate(pair, params.source_branch, params.target_branch, null);
    const assigneeIds = await this.readers(target, assigneesOf(params) ?? []);
    const reviewerIds = await this.readers(target, params.reviewer_ids ?? []);
    const milestoneId = await this.usableMilestone(target, params.milestone_id);
    const allowCollaboration =
      (params.allow_collaboration ?? params.allow_maintainer_to_push ?? false) &&
      (await this.mayAllowCollaboration(caller, { ...pair, sourceBranch: params.source_branch }));
    // The target's repository gets the fork's commits before anything reads them there.
    if (crossProject) await git.fetchCommit(sourceGit.dir, source.sha);
    const version = await this.versions.compute(git, targetBranch.sha, source.sha);
    const id = await this.dataSource
      .transaction(async (tx) => {
        const iid = await nextInternalId(tx, target.project.id, 'merge_requests');
        const now = new Date();
        const { identifiers } = await tx.getRepository(MergeRequest).insert({
          iid,
          targetProjectId: target.project.id,
          sourceProjectId: view.project.id,
          sourceBranch: params.source_branch,
          targetBranch: params.target_branch,
          title: params.title,
          description: params.description ?? null,
          authorId: caller.user?.id ?? null,
          draft: isDraftTitle(params.title),
          squash: params.squash ?? false,
          shouldRemoveSourceBranch: params.remove_source_branch ?? null,
          forceRemoveSourceBranch: params.remove_source_branch ?? false,
          allowCollaboration,
          mergeAfter: params.merge_after ? storableDate('merge_after', params.merge_after) : null,
          milestoneId: milestoneId ?? null,
          preparedAt: now,
          createdAt: now,
          updatedAt: now,
        });
        const mergeRequestId = identifiers[0].id as number;
        await setUsers(tx, 'merge_request_assignees', mergeRequestId, assigneeIds);
        await setUsers(tx, 'merge_request_reviewers', mergeRequestId, reviewerIds);
        const labelNames = namesOf(params.labels);
        const labels = labelNames?.length
          ? await this.services.labels.findOrCreateForProject(target.project.id, labelNames, tx)
          : [];
        await this.setLabels(tx, mergeRequestId, labels);
        const origin = { mergeRequestId, userId: caller.user?.id ?? null, at: now };
        await recordLabelChanges(
          tx,
          origin,
          [],
          labels.map((label) => label.id),
        );
        await recordMilestoneChange(tx, origin, null, milestoneId ?? null);
        await this.versions.store(tx, mergeRequestId, version);
        await this.approvalHooks?.created(tx, {
          id: mergeRequestId,
          targetProjectId: target.project.id,
          targetBranch: params.target_branch,
        });
        return mergeRequestId;
      })
      .catch(async (err: unknown) => {
        if (!isUniqueViolation(err)) throw err;
        await this.refuseDuplicate(pair, params.source_branch, params.target_branch, null);
        throw lostRace();
      });
    const created = await this.dataSource.getRepository(MergeRequest).findOneByOrFail({ id });
    await git.setMergeRequestRef(created.iid, source.sha);
    return this.detail(caller, target, id);
  }

  /**
   * GitLab's `find_target_project`: `target_project_id` when the caller may open merge requests there,
   * else the source's default target (its upstream, unless `mr_default_target_self` is set, the upstream
   * is more visible than the fork, or the caller may not open merge requests there), else the source.
   */
  private async targetOf(caller: Caller, source: ProjectView, targetId: number | undefined) {
    if (targetId === source.project.id) return source;
    if (targetId !== undefined) {
      const named = await this.visibleProject(caller, targetId);
      if (named && this.mayCreateIn(caller, named)) return named;
    }
    const upstreamId = source.project.forkedFromProjectId;
    if (upstreamId === null || projectSettings(source.project.settings).mr_default_target_self) return source;
    const upstream = await this.visibleProject(caller, upstreamId);
    if (
      upstream &&
      upstream.project.visibilityLevel <= source.project.visibilityLevel &&
      this.mayCreateIn(caller, upstream)
    )
      return upstream;
    return source;
  }

  private async visibleProject(caller: Caller, id: number): Promise<ProjectView | null> {
    try {
      return await this.services.projects.find(caller, id);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  }

  private mayCreateIn(caller: Caller, view: ProjectView): boolean {
    return (
      projectSettings(view.project.settings).merge_requests_enabled &&
      canProject(caller, 'create_merge_request_in', this.services.projects.subject(view))
    );
  }

  /** Both projects descend from the same root through their fork relations (GitLab's fork network). */
  private async inForkNetwork(a: number, b: number): Promise<boolean> {
    const [row] = (await this.dataSource.query(
      `WITH RECURSIVE up(start, id, parent, depth) AS (
         SELECT p.id, p.id, p.forked_from_project_id, 0 FROM projects p WHERE p.id = ANY($1::int[])
         UNION ALL
         SELECT up.start, p.id, p.forked_from_project_id, up.depth + 1 FROM up
         JOIN projects p ON p.id = up.parent WHERE up.depth < 100)
       SELECT count(DISTINCT id)::int AS roots FROM up WHERE parent IS NULL OR depth = 100`,
      [[a, b]],
    )) as Array<{ roots: number }>;
    return row.roots === 1;
  }

  /**
   * GitLab's `can_allow_collaboration?`: a merge request between two projects, both public or internal,
   * from a branch the fork does not protect, set by one who may push to the source project.
   */
  private async mayAllowCollaboration(
    caller: Caller,
    mr: { sourceProjectId: number | null; targetProjectId: number; sourceBranch: string },
  ): Promise<boolean> {
    if (mr.sourceProjectId === null || mr.sourceProjectId === mr.targetProjectId || !caller.user)
      return false;
    const rows = (await this.dataSource.query(
      'SELECT id, visibility_level, archived FROM projects WHERE id = ANY($1::int[])',
      [[mr.sourceProjectId, mr.targetProjectId]],
    )) as Array<{ id: number; visibility_level: number; archived: boolean }>;
    if (rows.length !== 2 || rows.some((row) => Number(row.visibility_level) <= Visibility.private))
      return false;
    const source = rows.find((row) => Number(row.id) === mr.sourceProjectId)!;
    const access = await projectAccess(this.dataSource.manager, caller, { id: mr.sourceProjectId });
    const subject = {
      visibilityLevel: Number(source.visibility_level),
      accessLevel: access.level,
      archived: source.archived,
    };
    if (!canProject(caller, 'push_code', subject)) return false;
    return !(await this.services.protectedRefs.isProtectedBranch(mr.sourceProjectId, mr.sourceBranch));
  }

  /** 409 with GitLab's message when another open merge request has the same pair of branches. */
  private async refuseDuplicate(
    pair: { sourceProjectId: number | null; targetProjectId: number },
    source: string,
    target: string,
    except: number | null,
  ) {
    const [row] = (await this.dataSource.query(
      `SELECT iid FROM merge_requests WHERE source_project_id = $1 AND target_project_id = $5
         AND source_branch = $2 AND target_branch = $3 AND state IN ('opened', 'locked')
         AND ($4::int IS NULL OR id <> $4) LIMIT 1`,
      [pair.sourceProjectId, source, target, except, pair.targetProjectId],
    )) as Array<{ iid: number }>;
    if (row)
      throw new ApiError(409, {
        message: [`Another open merge request already exists for this source branch: !${row.iid}`],
      });
  }

  /** Of the given users, those who may read the project's merge requests (others are left out, as GitLab does). */
  private async readers(view: ProjectView, ids: number[]): Promise<number[]> {
    const wanted = [...new Set(ids.filter((id) => id > 0))];
    if (wanted.length === 0) return [];
    const users = await this.dataSource.getRepository(User).findBy({ id: In(wanted) });
    const allowed: number[] = [];
    for (const user of users) {
      if (user.state !== 'active') continue;
      const caller: Caller = { user, token: null };
      const subject = await projectSubject(this.dataSource.manager, caller, view.project);
      if (canProject(caller, 'read_merge_request', subject)) allowed.push(user.id);
    }
    return allowed.sort((a, b) => a - b);
  }

  async update(
    caller: Caller,
    view: ProjectView,
    iid: number,
    params: UpdateMergeRequestParams,
  ): Promise<MergeRequestDetailRecords> {
    const mr = await this.find(view, iid);
    if (!canUpdateMergeRequest(caller, view.accessLevel, mr.authorId)) throw forbidden();
    if (!UPDATE_KEYS.some((key) => params[key] !== undefined))
      throw badParameter(`${UPDATE_KEYS.join(', ')} are missing, at least one parameter must be provided`);
    const { git } = this.services.repositories.open(view);
    const targetBranch = params.target_branch ?? mr.targetBranch;
    if (targetBranch !== mr.targetBranch) {
      if (targetBranch === mr.sourceBranch && mr.sourceProjectId === mr.targetProjectId)
        throw new ApiError(422, { message: ["You can't use same project/branch for source and target"] });
      if (!(await git.branch(targetBranch))) throw validationFailed({ target_branch: ['does not exist'] });
    }
    let state = mr.state;
    if (params.state_event === 'close' && mr.state === 'opened') state = 'closed';
    // One whose fork is gone cannot be reopened (GitLab's `reopenable?`).
    if (params.state_event === 'reopen' && mr.state === 'closed' && mr.sourceProjectId !== null)
      state = 'opened';
    if (state === 'opened' && (state !== mr.state || targetBranch !== mr.targetBranch))
      await this.refuseDuplicate(mr, mr.sourceBranch, targetBranch, mr.id);
    const assignees = assigneesOf(params);
    const assigneeIds = assignees === undefined ? undefined : await this.readers(view, assignees);
    const reviewerIds =
      params.reviewer_ids === undefined ? undefined : await this.readers(view, params.reviewer_ids);
    const milestoneId = await this.usableMilestone(view, params.milestone_id);
    // A new target, or a reopened merge request whose source moved meanwhile, gets a new version.
    let version = null;
    const sourceId = mr.sourceProjectId;
    if (state === 'opened' && sourceId !== null && (targetBranch !== mr.targetBranch || state !== mr.state)) {
      const found = await this.versions.heads(
        await this.sourceGit(sourceId, view),
        git,
        mr.sourceBranch,
        targetBranch,
      );
      if (found) version = await this.versions.compute(git, found.start, found.head);
    }
    const wantsCollaboration = params.allow_collaboration ?? params.allow_maintainer_to_push;
    // Dropped, as GitLab filters it, unless the caller may allow it.
    const allowCollaboration =
      wantsCollaboration !== undefined && (await this.mayAllowCollaboration(caller, mr))
        ? wantsCollaboration
        : mr.allowCollaboration;
    const title = params.title ?? mr.title;
    const now = new Date();
    await this.dataSource
      .transaction(async (tx) => {
        // The milestone before the change, read under the row lock, for its events.
        const [locked] = (await tx.query('SELECT milestone_id FROM merge_requests WHERE id = $1 FOR UPDATE', [
          mr.id,
        ])) as Array<{ milestone_id: number | null }>;
        await tx.getRepository(MergeRequest).update(mr.id, {
          title,
          draft: isDraftTitle(title),
          description: params.description ?? mr.description,
          targetBranch,
          state,
          ...(state !== mr.state && state === 'closed'
            ? { closedAt: now, closedById: caller.user?.id ?? null }
            : {}),
          ...(state !== mr.state && state === 'opened' ? { closedAt: null, closedById: null } : {}),
          squash: params.squash ?? mr.squash,
          shouldRemoveSourceBranch: params.remove_source_branch ?? mr.shouldRemoveSourceBranch,
          discussionLocked: params.discussion_locked ?? mr.discussionLocked,
          allowCollaboration,
          mergeAfter:
            params.merge_after === undefined
              ? mr.mergeAfter
              : params.merge_after === null
                ? null
                : storableDate('merge_after', params.merge_after),
          ...(milestoneId !== undefined ? { milestoneId } : {}),
          updatedAt: now,
        });
        const origin = { mergeRequestId: mr.id, userId: caller.user?.id ?? null, at: now };
        await this.changeLabels(tx, view, origin, params);
        if (milestoneId !== undefined)
          await recordMilestoneChange(tx, origin, locked?.milestone_id ?? null, milestoneId);
        if (state !== mr.state)
          await recordStateChange(tx, origin, state === 'closed' ? 'closed' : 'reopened');
        // The users before the change, read under the row lock, for the system notes.
        const people: MergeRequestChanged['changes'] = {};
        if (assigneeIds !== undefined) {
          people.assignees = moved(await usersOf(tx, 'merge_request_assignees', mr.id), assigneeIds);
          await setUsers(tx, 'merge_request_assignees', mr.id, assigneeIds, true);
        }
        if (reviewerIds !== undefined) {
          people.reviewers = moved(await usersOf(tx, 'merge_request_reviewers', mr.id), reviewerIds);
          await setUsers(tx, 'merge_request_reviewers', mr.id, reviewerIds, true);
        }
        if (version) await this.versions.store(tx, mr.id, version);
        const changes = {
          ...changesOf(mr, { state, title, description: params.description, params }),
          ...(people.assignees?.added.length || people.assignees?.removed.length
            ? { assignees: people.assignees }
            : {}),
          ...(people.reviewers?.added.length || people.reviewers?.removed.length
            ? { reviewers: people.reviewers }
            : {}),
        };
        if (Object.keys(changes).length > 0)
          await this.events.publish(tx, 'merge_request.changed', {
            mergeRequestId: mr.id,
            changeId: randomUUID(),
            actorId: caller.user?.id ?? null,
            at: now.toISOString(),
            changes,
          });
      })
      .catch(async (err: unknown) => {
        if (!isUniqueViolation(err)) throw err;
        await this.refuseDuplicate(mr, mr.sourceBranch, targetBranch, mr.id);
        throw lostRace();
      });
    if (version) await git.setMergeRequestRef(mr.iid, version.headCommitSha);
    return this.detail(caller, view, mr.id);
  }

  /** The repository of a merge request's source project (the target's own for one within a project). */
  private async sourceGit(sourceProjectId: number, target: ProjectView): Promise<GitRepository> {
    if (sourceProjectId === target.project.id) return this.services.repositories.open(target).git;
    const [row] = (await this.dataSource.query('SELECT repository_storage FROM projects WHERE id = $1', [
      sourceProjectId,
    ])) as Array<{ repository_storage: string }>;
    if (!row) throw recordNotFound();
    return this.services.repositories.gitOf({
      id: sourceProjectId,
      repositoryStorage: row.repository_storage,
    });
  }

  /**
   * The milestone id to store: undefined when not given, null for `0`, null or one the project cannot use
   * (GitLab drops a milestone that is not its project's or an ancestor group's).
   */
  private async usableMilestone(
    view: ProjectView,
    milestoneId: number | null | undefined,
  ): Promise<number | null | undefined> {
    if (milestoneId === undefined) return undefined;
    if (milestoneId === null || milestoneId === 0) return null;
    const milestone = await this.services.milestones.availableToProject(view.project.id, { id: milestoneId });
    return milestone?.id ?? null;
  }

  /** `labels` replaces, then `add_labels` adds and `remove_labels` removes, as GitLab combines them. */
  private async changeLabels(
    tx: EntityManager,
    view: ProjectView,
    origin: EventOrigin,
    params: UpdateMergeRequestParams,
  ): Promise<void> {
    const { mergeRequestId } = origin;
    const replace = namesOf(params.labels);
    const add = namesOf(params.add_labels);
    const remove = namesOf(params.remove_labels);
    if (replace === undefined && add === undefined && remove === undefined) return;
    const labels = this.services.labels;
    const rows = (await tx.query('SELECT label_id FROM merge_request_labels WHERE merge_request_id = $1', [
      mergeRequestId,
    ])) as Array<{ label_id: number }>;
    const before = rows.map((row) => Number(row.label_id));
    let ids = new Set(before);
    if (replace !== undefined)
      ids = new Set((await labels.findOrCreateForProject(view.project.id, replace, tx)).map((l) => l.id));
    if (add?.length)
      for (const label of await labels.findOrCreateForProject(view.project.id, add, tx)) ids.add(label.id);
    if (remove?.length)
      for (const label of await labels.availableToProject(view.project.id, remove, tx)) ids.delete(label.id);
    await tx.query('DELETE FROM merge_request_labels WHERE merge_request_id = $1', [mergeRequestId]);
    await this.setLabels(
      tx,
      mergeRequestId,
      [...ids].map((id) => ({ id })),
    );
    await recordLabelChanges(tx, origin, before, ids);
  }

  private async setLabels(tx: EntityManager, mergeRequestId: number, labels: Array<{ id: number }>) {
    if (labels.length === 0) return;
    await tx.query(
      `INSERT INTO merge_request_labels (merge_request_id, label_id) SELECT $1, unnest($2::int[])
       ON CONFLICT DO NOTHING`,
      [mergeRequestId, labels.map((label) => label.id)],
    );
  }

  async remove(view: ProjectView, iid: number): Promise<void> {
    const mr = await this.find(view, iid);
    await this.dataSource.getRepository(MergeRequest).delete(mr.id);
    await this.services.repositories.open(view).git.setMergeRequestRef(mr.iid, null);
  }

  // ---- commits, diffs, versions, participants ----

  private async latestDiff(mr: MergeRequest): Promise<MergeRequestDiff | null> {
    return (await this.versions.latest(this.dataSource.manager, [mr.id])).get(mr.id) ?? null;
  }

  /** The commits of a version, newest first: from the merge base (excluded) to the head. */
  private async versionCommits(
    view: ProjectView,
    diff: MergeRequestDiff | null,
    skip: number,
    count: number,
  ): Promise<GitCommit[]> {
    if (!diff || count <= 0) return [];
    const range = diff.baseCommitSha ? `${diff.baseCommitSha}..${diff.headCommitSha}` : diff.headCommitSha;
    return this.services.repositories.open(view).git.log({ revisions: [range], skip, maxCount: count });
  }

  async commits(
    view: ProjectView,
    iid: number,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<GitCommit>> {
    const diff = await this.latestDiff(await this.find(view, iid));
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const items = await this.versionCommits(view, diff, (page - 1) * perPage, perPage);
    return { items, headers: offsetHeaders(diff?.commitsCount ?? 0, page, perPage, request) };
  }

  /** A version's file diffs, with the paths that are generated at its head (as compare marks them). */
  private async versionDiffs(view: ProjectView, diff: MergeRequestDiff | null): Promise<VersionDiffs> {
    if (!diff) return { diffs: [], overflow: false, generated: new Set() };
    const { git } = this.services.repositories.open(view);
    const result = await git.diffs(diff.baseCommitSha ?? EMPTY_TREE, diff.headCommitSha);
    const paths = result.diffs.filter((file) => !file.deletedFile).map((file) => file.newPath);
    const generated =
      paths.length > 0 ? await git.generatedPaths(diff.headCommitSha, paths) : new Set<string>();
    return { ...result, generated };
  }

  async changes(
    caller: Caller,
    view: ProjectView,
    iid: number,
  ): Promise<MergeRequestDetailRecords & { changes: VersionDiffs }> {
    const mr = await this.find(view, iid);
    const detail = await this.detail(caller, view, mr.id);
    return { ...detail, changes: await this.versionDiffs(view, detail.details.diff) };
  }

  async diffs(
    view: ProjectView,
    iid: number,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<DiffResult['diffs'][number]> & { generated: Set<string> }> {
    const { diffs, generated } = await this.versionDiffs(
      view,
      await this.latestDiff(await this.find(view, iid)),
    );
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    return {
      items: diffs.slice((page - 1) * perPage, page * perPage),
      headers: offsetHeaders(diffs.length, page, perPage, request),
      generated,
    };
  }

  async participants(view: ProjectView, iid: number): Promise<User[]> {
    const mr = await this.find(view, iid);
    const records = await this.related(this.dataSource.manager, [mr]);
    const ids = [
      mr.authorId,
      ...(records.assignees.get(mr.id) ?? []),
      ...(records.reviewers.get(mr.id) ?? []),
    ];
    const seen = new Set<number>();
    const users: User[] = [];
    for (const id of ids) {
      if (id === null || seen.has(id)) continue;
      seen.add(id);
      const user = records.users.get(id);
      if (user) users.push(user);
    }
    return users;
  }

  async listVersions(
    view: ProjectView,
    iid: number,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<MergeRequestDiff>> {
    const mr = await this.find(view, iid);
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const [items, total] = await this.dataSource.getRepository(MergeRequestDiff).findAndCount({
      where: { mergeRequestId: mr.id },
      order: { id: 'DESC' },
      skip: (page - 1) * perPage,
      take: perPage,
    });
    return { items, headers: offsetHeaders(total, page, perPage, request) };
  }

  async version(
    view: ProjectView,
    iid: number,
    versionId: number,
  ): Promise<{ version: MergeRequestDiff; commits: GitCommit[]; diffs: VersionDiffs }> {
    const mr = await this.find(view, iid);
    const version = await this.dataSource
      .getRepository(MergeRequestDiff)
      .findOneBy({ id: versionId, mergeRequestId: mr.id });
    if (!version) throw recordNotFound();
    const [commits, diffs] = await Promise.all([
      this.versionCommits(view, version, 0, version.commitsCount),
      this.versionDiffs(view, version),
    ]);
    return { version, commits, diffs };
  }

  // ---- time tracking ----

  async timeStats(view: ProjectView, iid: number): Promise<MergeRequest> {
    return this.find(view, iid);
  }

  async setTimeEstimate(view: ProjectView, iid: number, duration: string | null): Promise<MergeRequest> {
    const seconds = duration === null ? 0 : parseDuration(duration);
    if (seconds === null || seconds < 0) throw badParameter('duration is invalid');
    return this.changeTime(view, iid, { timeEstimate: seconds });
  }

  async addSpentTime(view: ProjectView, iid: number, duration: string | null): Promise<MergeRequest> {
    if (duration === null) return this.changeTime(view, iid, { totalTimeSpent: 0 });
    const seconds = parseDuration(duration);
    if (seconds === null) throw badParameter('duration is invalid');
    const mr = await this.find(view, iid);
    await this.dataSource.query(
      `UPDATE merge_requests SET total_time_spent = LEAST(GREATEST(total_time_spent + $2::bigint, 0), 2147483647),
         updated_at = now() WHERE id = $1`,
      [mr.id, seconds],
    );
    return this.dataSource.getRepository(MergeRequest).findOneByOrFail({ id: mr.id });
  }

  private async changeTime(
    view: ProjectView,
    iid: number,
    change: Partial<MergeRequest>,
  ): Promise<MergeRequest> {
    const mr = await this.find(view, iid);
    await this.dataSource.getRepository(MergeRequest).update(mr.id, { ...change, updatedAt: new Date() });
    return this.dataSource.getRepository(MergeRequest).findOneByOrFail({ id: mr.id });
  }
}

/**
 * For the merge requests from forks: stored `allow_collaboration`, while both projects are public or
 * internal and the fork does not protect the source branch. One query for a page.
 */
async function collaborationOf(manager: EntityManager, items: MergeRequest[]): Promise<Map<number, boolean>> {
  const forks = items.filter((mr) => mr.sourceProjectId !== mr.targetProjectId);
  if (forks.length === 0) return new Map();
  const rows = (await manager.query(
    `SELECT mr.id, COALESCE(mr.allow_collaboration AND s.visibility_level > 0 AND t.visibility_level > 0
       AND NOT EXISTS (SELECT 1 FROM protected_branches pb WHERE pb.project_id = mr.source_project_id
         AND mr.source_branch LIKE replace(replace(replace(replace(pb.name, '\\', '\\\\'), '%', '\\%'),
           '_', '\\_'), '*', '%')), false) AS allowed
     FROM merge_requests mr
     LEFT JOIN projects s ON s.id = mr.source_project_id
     JOIN projects t ON t.id = mr.target_project_id
     WHERE mr.id = ANY($1::int[])`,
    [forks.map((mr) => mr.id)],
  )) as Array<{ id: number; allowed: boolean }>;
  return new Map(rows.map((row) => [Number(row.id), row.allowed]));
}

/** The merge request that held the pair of branches was closed between the insert and the look-up. */
const lostRace = () =>
  new ApiError(409, { message: ['Another open merge request already exists for this source branch'] });

/** A date-time parameter as PostgreSQL can store it (years 1 to 9999), else 400 naming the parameter. */
function storableDate(name: string, value: string): Date {
  const date = new Date(value);
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < 1 || year > 9999) throw badParameter(`${name} is invalid`);
  return date;
}

/** Label names from a comma-separated string or a list; undefined when not given. */
function namesOf(value: string | string[] | undefined | null): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const parts = Array.isArray(value) ? value.flatMap((name) => name.split(',')) : value.split(',');
  return parts.map((name) => name.trim()).filter((name) => name !== '');
}

function exclusive(params: Record<string, unknown>, a: string, b: string): void {
  if (params[a] !== undefined && params[b] !== undefined)
    throw badParameter(`${a}, ${b} are mutually exclusive`);
}

function assigneesOf(params: { assignee_id?: number; assignee_ids?: number[] }): number[] | undefined {
  if (params.assignee_ids !== undefined) return params.assignee_ids;
  if (params.assignee_id !== undefined) return params.assignee_id === 0 ? [] : [params.assignee_id];
  return undefined;
}

/** What an update changes that a system note records. */
function changesOf(
  mr: MergeRequest,
  next: {
    state: MergeRequest['state'];
    title: string;
    description: string | null | undefined;
    params: UpdateMergeRequestParams;
  },
): MergeRequestChanged['changes'] {
  const changes: MergeRequestChanged['changes'] = {};
  if (next.state !== mr.state) changes.state = next.state === 'closed' ? 'closed' : 'reopened';
  if (next.title !== mr.title) {
    const draft = isDraftTitle(next.title);
    if (draft !== mr.draft) changes.draft = draft;
    if (stripDraft(next.title) !== stripDraft(mr.title)) changes.title = { from: mr.title, to: next.title };
  }
  if (next.description !== undefined && next.description !== mr.description) changes.description = true;
  const locked = next.params.discussion_locked;
  if (locked !== undefined && locked !== (mr.discussionLocked ?? false)) changes.discussionLocked = locked;
  const after = next.params.merge_after;
  if (after !== undefined && (after ? Date.parse(after) : null) !== (mr.mergeAfter?.getTime() ?? null))
    changes.mergeAfter = true;
  return changes;
}

async function usersOf(tx: EntityManager, table: string, mergeRequestId: number): Promise<number[]> {
  const rows = (await tx.query(`SELECT user_id FROM ${table} WHERE merge_request_id = $1`, [
    mergeRequestId,
  ])) as Array<{ user_id: number }>;
  return rows.map((row) => row.user_id);
}

/** Who a change of a user list adds and removes. */
const moved = (before: number[], after: number[]) => ({
  added: after.filter((id) => !before.includes(id)),
  removed: before.filter((id) => !after.includes(id)),
});

async function setUsers(
  tx: EntityManager,
  table: string,
  mergeRequestId: number,
  userIds: number[],
  replace = false,
) {
  if (replace) await tx.query(`DELETE FROM ${table} WHERE merge_request_id = $1`, [mergeRequestId]);
  if (userIds.length > 0)
    await tx.query(
      `INSERT INTO ${table} (merge_request_id, user_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING`,
      [mergeRequestId, userIds],
    );
}

/** SQL: the merge request has a row in `table` (assignees or reviewers) for the user `param` names. */
const exists = (table: string, param: string) =>
  `EXISTS (SELECT 1 FROM ${table} j WHERE j.merge_request_id = mr.id AND j.user_id = ${param})`;
const existsAny = (table: string) => `EXISTS (SELECT 1 FROM ${table} j WHERE j.merge_request_id = mr.id)`;
const userByName = (param: string) => `(SELECT u.id FROM users u WHERE lower(u.username) = lower(${param}))`;

/** The seed's filters, each as SQL on `mr`. */
function applyFilters(
  query: SelectQueryBuilder<MergeRequest>,
  params: ListMergeRequestsParams,
  labels: LabelUniverse | null,
): void {
  if (params.state && params.state !== 'all') query.andWhere('mr.state = :state', { state: params.state });
  if (params.iids?.length) query.andWhere('mr.iid IN (:...iids)', { iids: params.iids });
  if (params.author_id !== undefined)
    query.andWhere('mr.author_id = :authorId', { authorId: params.author_id });
  if (params.author_username !== undefined)
    query.andWhere(`mr.author_id = ${userByName(':authorName')}`, { authorName: params.author_username });
  const assignee = params.assignee_id;
  if (isNone(assignee)) query.andWhere(`NOT ${existsAny('merge_request_assignees')}`);
  else if (isAny(assignee)) query.andWhere(existsAny('merge_request_assignees'));
  else if (assignee !== undefined)
    query.andWhere(exists('merge_request_assignees', ':assigneeId'), { assigneeId: Number(assignee) });
  const reviewer = params.reviewer_id ?? params.reviewer_username;
  if (isNone(reviewer)) query.andWhere(`NOT ${existsAny('merge_request_reviewers')}`);
  else if (isAny(reviewer)) query.andWhere(existsAny('merge_request_reviewers'));
  else if (params.reviewer_id !== undefined)
    query.andWhere(exists('merge_request_reviewers', ':reviewerId'), {
      reviewerId: Number(params.reviewer_id),
    });
  else if (params.reviewer_username !== undefined)
    query.andWhere(exists('merge_request_reviewers', userByName(':reviewerName')), {
      reviewerName: params.reviewer_username,
    });
  if (params.merge_user_id !== undefined)
    query.andWhere('mr.merge_user_id = :mergeUserId', { mergeUserId: params.merge_user_id });
  if (params.merge_user_username !== undefined)
    query.andWhere(`mr.merge_user_id = ${userByName(':mergeUserName')}`, {
      mergeUserName: params.merge_user_username,
    });
  if (params.created_after)
    query.andWhere('mr.created_at >= :createdAfter', {
      createdAfter: storableDate('created_after', params.created_after),
    });
  if (params.created_before)
    query.andWhere('mr.created_at <= :createdBefore', {
      createdBefore: storableDate('created_before', params.created_before),
    });
  if (params.updated_after)
    query.andWhere('mr.updated_at >= :updatedAfter', {
      updatedAfter: storableDate('updated_after', params.updated_after),
    });
  if (params.updated_before)
    query.andWhere('mr.updated_at <= :updatedBefore', {
      updatedBefore: storableDate('updated_before', params.updated_before),
    });
  if (params.source_branch !== undefined)
    query.andWhere('mr.source_branch = :sourceBranch', { sourceBranch: params.source_branch });
  if (params.target_branch !== undefined)
    query.andWhere('mr.target_branch = :targetBranch', { targetBranch: params.target_branch });
  if (params.search) {
    const fields = (params.in ?? 'title,description').split(',');
    const clauses = fields.map((field) =>
      field === 'title' ? 'mr.title ILIKE :term' : 'mr.description ILIKE :term',
    );
    query.andWhere(`(${clauses.join(' OR ')})`, { term: containing(params.search) });
  }
  if (params.wip === 'yes') query.andWhere('mr.draft');
  if (params.wip === 'no') query.andWhere('NOT mr.draft');
  const not = params.not ?? {};
  if (not.author_id !== undefined)
    query.andWhere('mr.author_id IS DISTINCT FROM :notAuthorId', { notAuthorId: not.author_id });
  if (not.author_username !== undefined)
    query.andWhere(`mr.author_id IS DISTINCT FROM ${userByName(':notAuthorName')}`, {
      notAuthorName: not.author_username,
    });
  if (not.assignee_id !== undefined)
    query.andWhere(`NOT ${exists('merge_request_assignees', ':notAssigneeId')}`, {
      notAssigneeId: not.assignee_id,
    });
  if (not.assignee_username !== undefined)
    query.andWhere(`NOT ${exists('merge_request_assignees', userByName(':notAssigneeName'))}`, {
      notAssigneeName: not.assignee_username,
    });
  if (not.reviewer_id !== undefined)
    query.andWhere(`NOT ${exists('merge_request_reviewers', ':notReviewerId')}`, {
      notReviewerId: not.reviewer_id,
    });
  if (not.reviewer_username !== undefined)
    query.andWhere(`NOT ${exists('merge_request_reviewers', userByName(':notReviewerName'))}`, {
      notReviewerName: not.reviewer_username,
    });
  applyLabelFilters(query, params.labels, not.labels, labels);
  applyMilestoneFilters(query, params.milestone, not.milestone);
  // No deployments exist yet, so nothing was deployed anywhere.
  if (params.deployed_before || params.deployed_after || params.environment !== undefined)
    query.andWhere('false');
}

/** SQL: the caller's reactions on the merge request itself (not on its notes), optionally of one name. */
const myReaction = (nameParam?: string) =>
  `EXISTS (SELECT 1 FROM award_emoji a WHERE a.merge_request_id = mr.id AND a.note_id IS NULL
    AND a.user_id = :reactor${nameParam ? ` AND a.name = ${nameParam}` : ''})`;

/** `my_reaction_emoji` (a name, `None`, `Any`) and `not[my_reaction_emoji]`: ignored without a caller, as GitLab does. */
function applyReactionFilters(
  query: SelectQueryBuilder<MergeRequest>,
  params: ListMergeRequestsParams,
  userId: number | undefined,
): void {
  if (userId === undefined) return;
  const emoji = params.my_reaction_emoji;
  if (isNone(emoji)) query.andWhere(`NOT ${myReaction()}`, { reactor: userId });
  else if (isAny(emoji)) query.andWhere(myReaction(), { reactor: userId });
  else if (emoji !== undefined) query.andWhere(myReaction(':reaction'), { reactor: userId, reaction: emoji });
  const notEmoji = params.not?.my_reaction_emoji;
  if (notEmoji !== undefined)
    query.andWhere(`NOT ${myReaction(':notReaction')}`, { reactor: userId, notReaction: notEmoji });
}

/**
 * The labels a label filter may name: in a project's list, the project's and its ancestor groups' (the
 * only ones its merge requests carry); elsewhere any.
 */
interface LabelUniverse {
  projectId: number;
  groupIds: number[];
}

/**
 * `labels` (names, all required, any case; `None`, `Any`) and `not[labels]`, on the label ids each
 * merge request keeps (`label_ids`, in the lists' indexes). In a project the names are resolved to ids
 * once per statement; elsewhere, where a name may stand for many labels, each candidate's few ids are
 * looked up.
 */
function applyLabelFilters(
  query: SelectQueryBuilder<MergeRequest>,
  labels: string | undefined,
  notLabels: string | undefined,
  universe: LabelUniverse | null,
): void {
  if (isNone(labels)) query.andWhere(`mr.label_ids = '{}'`);
  else if (isAny(labels)) query.andWhere(`mr.label_ids <> '{}'`);
  const named = isNone(labels) || isAny(labels) ? [] : (namesOf(labels) ?? []);
  const excluded = namesOf(notLabels) ?? [];
  if (named.length === 0 && excluded.length === 0) return;
  if (universe) query.setParameters({ labelProject: universe.projectId, labelGroups: universe.groupIds });
  const carries = (param: string) =>
    universe
      ? `mr.label_ids && ARRAY(SELECT l.id FROM labels l WHERE lower(l.title) = ${param}
          AND (l.project_id = :labelProject OR l.group_id = ANY(:labelGroups::int[])))`
      : `EXISTS (SELECT 1 FROM labels l WHERE l.id = ANY(mr.label_ids) AND lower(l.title) = ${param})`;
  named.forEach((name, index) =>
    query.andWhere(carries(`:label${index}`), { [`label${index}`]: name.toLowerCase() }),
  );
  if (excluded.length > 0)
    query.andWhere(`NOT ${carries('ANY(:notLabels::text[])')}`, {
      notLabels: excluded.map((name) => name.toLowerCase()),
    });
}

/** Milestones that have started and are not past due; the next one due of each project or group. */
const STARTED = `SELECT m.id FROM milestones m WHERE m.state = 'active' AND m.start_date <= CURRENT_DATE
  AND (m.due_date IS NULL OR m.due_date >= CURRENT_DATE)`;
const UPCOMING = `SELECT m.id FROM milestones m WHERE m.state = 'active' AND m.due_date > CURRENT_DATE
  AND NOT EXISTS (SELECT 1 FROM milestones o WHERE o.state = 'active' AND o.due_date > CURRENT_DATE
    AND o.due_date < m.due_date AND o.project_id IS NOT DISTINCT FROM m.project_id
    AND o.group_id IS NOT DISTINCT FROM m.group_id)`;

function applyMilestoneFilters(
  query: SelectQueryBuilder<MergeRequest>,
  milestone: string | undefined,
  notMilestone: string | undefined,
): void {
  if (milestone !== undefined) {
    const keyword = milestone.toLowerCase();
    if (keyword === 'none') query.andWhere('mr.milestone_id IS NULL');
    else if (keyword === 'any') query.andWhere('mr.milestone_id IS NOT NULL');
    else if (keyword === 'started') query.andWhere(`mr.milestone_id IN (${STARTED})`);
    else if (keyword === 'upcoming') query.andWhere(`mr.milestone_id IN (${UPCOMING})`);
    else
      query.andWhere('mr.milestone_id IN (SELECT m.id FROM milestones m WHERE m.title = :milestoneTitle)', {
        milestoneTitle: milestone,
      });
  }
  if (notMilestone !== undefined)
    query.andWhere(
      `(mr.milestone_id IS NULL OR mr.milestone_id NOT IN
        (SELECT m.id FROM milestones m WHERE m.title = :notMilestoneTitle))`,
      { notMilestoneTitle: notMilestone },
    );
}
