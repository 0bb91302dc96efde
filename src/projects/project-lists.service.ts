/** The project lists (`GET /projects`, a project's forks): filters, orders, and one statement a page. */
import { type DataSource, type SelectQueryBuilder } from 'typeorm';
import {
  activeSql,
  isAdmin,
  projectAccessOf,
  projectAccessSql,
  projectMembershipSql,
  Visibility,
  whereProjectVisible,
} from '../core/abilities.js';
import { canReadStatistics } from './abilities.js';
import type { Caller } from '../core/auth.js';
import { methodNotAllowed, unauthorized } from '../core/errors.js';
import {
  isKeyset,
  paginateKeysetRows,
  paginateOffsetRows,
  type Page,
  type RequestInfo,
  type RowReader,
  type RowsPage,
} from '../core/pagination.js';
import type { Contributions, CoreDeps, ServiceRegistry } from '../core/family.js';
import { User } from '../users/user.entity.js';
import { ProjectStatistics } from './project-statistics.entity.js';
import { Project } from './project.entity.js';
import { readContributedFields } from './project-attributes.js';
import { readableProjectIds } from '../core/readable-projects.js';
import { preparedQuery } from '../db/prepared.js';
import { entityRows, type EntityRows } from '../db/rows.js';
import { orderBySimilarity, whereProjectMatches } from './project-search.js';
import type { ListForksParams, ListProjectsParams, ProjectView } from './projects.service.js';

const ADMIN_ORDERS = new Set(['repository_size', 'storage_size', 'packages_size', 'wiki_size']);
const ORDER_COLUMNS: Record<string, string> = {
  id: 'p.id',
  name: 'p.name',
  path: 'p.path',
  created_at: 'p.created_at',
  updated_at: 'p.updated_at',
  star_count: 'p.star_count',
  last_activity_at: 'p.last_activity_at',
  repository_size: 'st.repository_size',
  storage_size: 'st.storage_size',
  packages_size: 'st.packages_size',
  wiki_size: 'st.wiki_size',
};

export class ProjectListsService {
  private readonly dataSource: DataSource;
  private readonly contributions: Contributions;
  private ownerRows?: EntityRows<User>;
  private statisticsRows?: EntityRows<ProjectStatistics>;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'projects'>,
  ) {
    this.dataSource = deps.dataSource;
    this.contributions = deps.contributions;
  }

  /** The direct forks of a project that the caller may see, filtered and ordered as the project list. */
  listForks(
    caller: Caller,
    source: ProjectView,
    params: ListForksParams,
    request: RequestInfo,
  ): Promise<Page<ProjectView>> {
    return this.list(caller, params, request, { forkedFrom: source.project.id });
  }

  async list(
    caller: Caller,
    params: ListProjectsParams,
    request: RequestInfo,
    scope: { forkedFrom?: number } = {},
  ): Promise<Page<ProjectView>> {
    const admin = isAdmin(caller);
    // The projects the caller is a member of, stored per user while they hold (readableProjectIds).
    const member = caller.user
      ? readableProjectIds(this.dataSource, { ...caller, user: caller.user }, 'membership')
      : undefined;
    const isMember = member ? `p.id = ANY(${member.sql})` : projectMembershipSql('p', 'n');
    const query = whereProjectVisible(
      this.services.projects.baseQuery(),
      caller,
      'p',
      'n',
      member && isMember,
    );
    if (member) query.setParameters(member.parameters).addSelect(member.heldSql, 'readable_held');
    if (scope.forkedFrom !== undefined)
      query.andWhere('p.forked_from_project_id = :forkedFrom', { forkedFrom: scope.forkedFrom });
    if (caller.user) query.setParameter('callerId', caller.user.id);

    applyListFilters(query, params, admin);
    const needsUser = params.membership || params.owned || params.min_access_level !== undefined;
    if (needsUser && !caller.user) throw unauthorized();
    if (params.owned) query.andWhere(`n.kind = 'user' AND n.owner_id = :callerId`);
    if (params.membership) query.andWhere(isMember);
    if (params.min_access_level !== undefined) {
      query.andWhere(projectMembershipSql('p', 'n', true), { minAccess: params.min_access_level });
    }

    const terms = whereProjectMatches(query, params.search, Boolean(params.search_namespaces));

    let orderBy = params.order_by ?? 'created_at';
    if (ADMIN_ORDERS.has(orderBy) && !admin) orderBy = 'created_at';
    if (orderBy === 'similarity' && terms.length === 0) orderBy = 'created_at';
    const direction = (params.sort ?? 'desc').toUpperCase() as 'ASC' | 'DESC';
    if (isKeyset(params) && orderBy !== 'id') {
      throw methodNotAllowed('Keyset pagination is not yet available for this type of request');
    }
    if (orderBy === 'similarity') {
      if (caller.user) query.andWhere(isMember);
      orderBySimilarity(query, params.search!, direction);
    } else {
      if (ADMIN_ORDERS.has(orderBy)) query.leftJoin('p.statistics', 'st');
      query.orderBy(ORDER_COLUMNS[orderBy], direction);
    }
    if (orderBy !== 'id') query.addOrderBy('p.id', direction);
    if (params.statistics) query.leftJoinAndSelect('p.statistics', 'stats');
    // The caller's access and whether a project is shared come with the page: its shares are read
    // only when some project of the page has any.
    const withShares = !params.simple && Boolean(caller.user);
    if (caller.user) {
      const access = projectAccessSql('p', 'n', ':callerId');
      query
        .addSelect(access.project, 'access_project')
        .addSelect(access.group, 'access_group')
        .addSelect(access.shared, 'access_shared');
    }
    if (withShares)
      query.addSelect(
        `EXISTS (SELECT 1 FROM project_group_links sl WHERE sl.project_id = p.id AND ${activeSql('sl')})`,
        'has_shares',
      );

    // Namespace, owner and statistics are each one row per project: a page is one statement.
    const reader = this.listReader(Boolean(params.statistics));
    const page = isKeyset(params)
      ? await paginateKeysetRows(
          query,
          params,
          request,
          (last): Record<string, string> =>
            direction === 'ASC' ? { id_after: String(last.id) } : { id_before: String(last.id) },
          reader,
        )
      : await paginateOffsetRows(query, params, request, reader);
    if (page.rows.length) await member?.settle(page.rows[0].readable_held);
    return this.viewsOf(caller, params, page, withShares);
  }

  /** The page's projects as views: access, custom attributes, shares, fork sources and contributed fields. */
  private async viewsOf(
    caller: Caller,
    params: ListProjectsParams,
    page: RowsPage<Project>,
    withShares: boolean,
  ): Promise<Page<ProjectView>> {
    const admin = isAdmin(caller);
    const ids = page.items.map((project) => project.id);
    const attributes =
      params.with_custom_attributes && admin ? await this.services.projects.customAttributes(ids) : undefined;
    const shared = ids.filter((_, i) => page.rows[i].has_shares);
    const shares =
      withShares && shared.length > 0 ? await this.services.projects.sharedWithGroups(shared) : undefined;
    const sourceIds = page.items.flatMap((project) =>
      project.forkedFromProjectId === null ? [] : [project.forkedFromProjectId],
    );
    const sources = params.simple ? undefined : await this.services.projects.forkSources(caller, sourceIds);
    const contributed = params.simple
      ? undefined
      : await readContributedFields(this.contributions, this.dataSource.manager, ids);
    return {
      headers: page.headers,
      items: page.items.map((project, i) => {
        const row = page.rows[i];
        const accessLevel = caller.user
          ? projectAccessOf(row.access_project, row.access_group, row.access_shared).level
          : 0;
        return {
          project: project as ProjectView['project'],
          accessLevel,
          customAttributes: attributes ? (attributes.get(project.id) ?? []) : undefined,
          showStatistics: Boolean(params.statistics) && canReadStatistics(caller, accessLevel),
          sharedWithGroups: shares?.get(project.id) ?? [],
          forkedFrom:
            project.forkedFromProjectId === null ? undefined : sources?.get(project.forkedFromProjectId),
          contributed: contributed?.get(project.id),
        };
      }),
    };
  }

  /**
   * The list's statements, prepared (TypeORM names its aliases `<alias>_<column>`, as `entityRows`
   * reads them): the page's projects with namespace, owner and, when asked, statistics, with the
   * count beside them; and the count alone, for a page past the end.
   */
  private listReader(statistics: boolean): RowReader<Project> {
    const rows = this.services.projects.findRows;
    this.statisticsRows ??= entityRows(this.dataSource, ProjectStatistics, 'stats');
    const stats = this.statisticsRows;
    const owners = (this.ownerRows ??= entityRows(this.dataSource, User, 'owner'));
    const read = async (query: SelectQueryBuilder<Project>) => {
      const [sql, values] = query.getQueryAndParameters();
      const found = await preparedQuery(this.dataSource, sql, values);
      const items = found.map((row) => {
        const project = rows.project.hydrate(row) as ProjectView['project'];
        project.namespace = rows.namespace.hydrate(row)!;
        project.namespace.owner = owners.hydrate(row);
        if (statistics) project.statistics = stats.hydrate(row) ?? undefined;
        return project;
      });
      return { items, rows: found };
    };
    const counting = (query: SelectQueryBuilder<Project>) =>
      query.clone().orderBy().offset(undefined).limit(undefined).select('count(*)', 'total');
    return {
      read,
      readCounted: async (query) => {
        const page = await read(query.addSelect(`(${counting(query).getQuery()})`, 'page_total'));
        return { ...page, total: page.rows.length > 0 ? Number(page.rows[0].page_total) : undefined };
      },
      count: async (query) => {
        const [sql, values] = counting(query).getQueryAndParameters();
        const [row] = await preparedQuery<{ total: string }>(this.dataSource, sql, values);
        return Number(row.total);
      },
    };
  }
}

/** The list's filters on the project itself (`archived`, `visibility`, ids, activity, topics…). */
function applyListFilters(
  query: SelectQueryBuilder<Project>,
  params: ListProjectsParams,
  admin: boolean,
): void {
  if (params.archived !== undefined) query.andWhere('p.archived = :archived', { archived: params.archived });
  if (params.visibility)
    query.andWhere('p.visibility_level = :visibility', { visibility: Visibility[params.visibility] });
  if (params.id_after !== undefined) query.andWhere('p.id > :idAfter', { idAfter: params.id_after });
  if (params.id_before !== undefined) query.andWhere('p.id < :idBefore', { idBefore: params.id_before });
  if (params.last_activity_after)
    query.andWhere('p.last_activity_at > :activityAfter', { activityAfter: params.last_activity_after });
  if (params.last_activity_before) {
    query.andWhere('p.last_activity_at < :activityBefore', { activityBefore: params.last_activity_before });
  }
  if (params.imported !== undefined)
    query.andWhere(params.imported ? 'p.import_type IS NOT NULL' : 'p.import_type IS NULL');
  if (!(admin && params.include_pending_delete)) query.andWhere('p.marked_for_deletion_at IS NULL');
  if (admin && params.custom_attributes) {
    Object.entries(params.custom_attributes).forEach(([key, value], index) => {
      query.andWhere(
        `EXISTS (SELECT 1 FROM project_custom_attributes ca
           WHERE ca.project_id = p.id AND ca.key = :caKey${index} AND ca.value = :caValue${index})`,
        { [`caKey${index}`]: key, [`caValue${index}`]: value },
      );
    });
  }
  if (admin && params.repository_storage)
    query.andWhere('p.repository_storage = :storage', { storage: params.repository_storage });
  // No repository checksums are verified here, so none has failed.
  if (params.repository_checksum_failed) query.andWhere('FALSE');
  if (params.with_issues_enabled) query.andWhere(`COALESCE((p.settings->>'issues_enabled')::boolean, TRUE)`);
  if (params.with_merge_requests_enabled)
    query.andWhere(`COALESCE((p.settings->>'merge_requests_enabled')::boolean, TRUE)`);
  if (params.topic) {
    const topics = params.topic
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean);
    if (topics.length)
      query.andWhere('ARRAY(SELECT lower(t) FROM unnest(p.topics) t) @> CAST(:topics AS text[])', {
        topics,
      });
  }
}
