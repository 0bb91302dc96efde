/**
 * The merge request lists (of a project, a group, the instance) and their search filters, and the open
 * merge requests per label that the labels family shows.
 */
import type { DataSource, SelectQueryBuilder } from 'typeorm';
import { whereMergeRequestsReadable } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import {
  boundedOffsetHeaders,
  MAX_COUNTED_ITEMS,
  perPageOf,
  type Page,
  type RequestInfo,
} from '../core/pagination.js';
import { readableProjectIds, uncachedIds, type ReadableIds } from '../core/readable-projects.js';
import { preparedQuery } from '../db/prepared.js';
import { entityRows, type EntityRows } from '../db/rows.js';
import type { GroupView } from '../groups/groups.service.js';
import type { LabelCountScope } from '../labels/labels.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { MergeRequestExtensions } from './extension-points.js';
import { MergeRequestListCounts } from './list-counts.js';
import { applyFilters, applyReactionFilters, exists, type LabelUniverse } from './list-filters.js';
import { MergeRequestListPages } from './list-pages.js';
import { MergeRequest } from './merge-request.entity.js';
import { exclusive, type ListMergeRequestsParams } from './merge-request-params.js';
import { relatedSql, type MergeRequestRecords, type RelatedRow } from './merge-request-records.js';

/** Where a list looks: one project, the projects of a group, or the whole instance. */
export type ListScope = { project: ProjectView } | { group: GroupView } | { instance: true };

const ORDER_COLUMNS: Record<string, string> = {
  created_at: 'mr.created_at',
  updated_at: 'mr.updated_at',
  title: 'mr.title',
  merged_at: 'mr.merged_at',
};

/**
 * The rows up to a page's end, bounded by a literal in the statement: with a parameter alone, the
 * generic plan of the prepared statement assumes a tenth of all rows and sorts them, so PostgreSQL
 * plans it anew at every call (costlier than running it). A power of two (32 at least): few texts.
 */
const pageBound = (rows: number) => 2 ** Math.max(5, Math.ceil(Math.log2(rows)));

/**
 * A list's page (`page`, selected as `mr_<column>`) with what `related` loads, from the page itself, and
 * the capped count unless it is known (with the readable projects it counted, to keep it): one
 * statement, one row.
 */
const listSql = (
  extensions: MergeRequestExtensions,
  pageSql: string,
  count: { sql: string; withProjects: boolean } | null,
  order: string,
  bound: number,
  readable?: ReadableIds,
) => {
  const related = relatedSql(
    {
      all: '(SELECT ids FROM keys)::int[]',
      users: '(SELECT users FROM keys)::int[]',
      projects: '(SELECT projects FROM keys)::int[]',
      milestones: '(SELECT milestones FROM keys)::int[]',
      open: '(SELECT open FROM keys)::int[]',
    },
    extensions,
  );
  const sql = `
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
  return { sql, contributed: related.contributed };
};

type ListRow = RelatedRow & {
  items: Array<Record<string, unknown>> | null;
  counted: number | null;
  counted_projects?: number[] | null;
  readable_held?: boolean;
};

export class MergeRequestListsService {
  private readonly dataSource: DataSource;
  private readonly mergeRequestRows: EntityRows<MergeRequest>;
  private readonly listCounts: MergeRequestListCounts;
  /** Projects' list pages as answered, until a change to what they show. */
  readonly listPages: MergeRequestListPages;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'mergeRequests'>,
  ) {
    this.dataSource = deps.dataSource;
    this.mergeRequestRows = entityRows(this.dataSource, MergeRequest, 'mr');
    this.listCounts = new MergeRequestListCounts(this.dataSource);
    this.listPages = new MergeRequestListPages(this.dataSource);
  }

  private get extensions(): MergeRequestExtensions {
    return this.services.mergeRequests.extensions;
  }

  async list(
    caller: Caller,
    where: ListScope,
    params: ListMergeRequestsParams,
    request: RequestInfo,
  ): Promise<Page<MergeRequest> & MergeRequestRecords> {
    const { query, readable } = this.filtered(caller, where, params);
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
    const statement = listSql(
      this.extensions,
      paging.getQuery(),
      knownCount === undefined ? { sql: countSql, withProjects: countKey !== undefined } : null,
      `${column.replace('.', '_')} ${direction}${nulls ? ` ${nulls}` : ''}, mr_id ${direction}`,
      pageBound(page * perPage + 1),
      readable,
    );
    const [sql, values] = this.dataSource.driver.escapeQueryWithParameters(statement.sql, {
      ...query.getParameters(),
      pageLimit: perPage + 1,
      pageOffset: (page - 1) * perPage,
    });
    const [row] = await preparedQuery<ListRow>(this.dataSource, sql, values);
    await readable?.settle(row.readable_held);
    const counted = knownCount ?? row.counted!;
    if (countKey !== undefined && knownCount === undefined) {
      const projects = 'project' in where ? [where.project.project.id] : (row.counted_projects ?? []);
      this.listCounts.set(countKey, params, counted, projects, mark);
    }
    const total = counted > MAX_COUNTED_ITEMS ? null : counted;
    const rows = (row.items ?? []).map((json) => this.mergeRequestRows.hydrate(json)!);
    const items = rows.slice(0, perPage);
    const mergeRequests = this.services.mergeRequests;
    const records = await mergeRequests.recordsOf(this.dataSource.manager, items, row, statement.contributed);
    records.withLabelsDetails = params.with_labels_details === true;
    if (params.with_merge_status_recheck)
      await mergeRequests.recheck(caller, items, 'project' in where ? where.project : null);
    return {
      ...records,
      headers: boundedOffsetHeaders(total, rows.length > perPage, page, perPage, request),
    };
  }

  /** The list's query: its scope, what the caller may read, and every filter. */
  private filtered(
    caller: Caller,
    where: ListScope,
    params: ListMergeRequestsParams,
  ): { query: SelectQueryBuilder<MergeRequest>; readable?: ReadableIds } {
    exclusive(params, 'author_id', 'author_username');
    exclusive(params, 'merge_user_id', 'merge_user_username');
    exclusive(params, 'reviewer_id', 'reviewer_username');
    const query = this.dataSource.getRepository(MergeRequest).createQueryBuilder('mr');
    let readable: ReadableIds | undefined;
    if ('project' in where) {
      // The pipeline authorized the project: no join to decide visibility.
      this.services.mergeRequests.assertEnabled(where.project);
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
    this.extensions.applyListFilters(query, params);
    return { query, readable };
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

  /** Open merge requests per label, over the projects of `scope` whose merge requests the caller may read. */
  async countOpenWithLabels(
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
}
