import { type DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import type { components, operations } from '../../generated/openapi.js';
import {
  activeSql,
  canSee,
  directGroupMembershipsSql,
  groupMembershipSql,
  groupSubject,
  isAdmin,
  meetsAccessLevel,
  projectAccessLevels,
  projectMembershipSql,
  type Subject,
  Visibility,
  visibilityName,
  whereGroupVisible,
  whereProjectVisible,
} from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import type { Events } from '../core/events.js';
import '../projects/projects.events.js';
import { ApiError, forbidden, notFound, validationFailed } from '../core/errors.js';
import { recordId, recordIds } from '../core/ids.js';
import type { RepositoryStorage } from '../git/storage.js';
import { paginateOffset, type Page, type RequestInfo } from '../core/pagination.js';
import { Member } from '../members/member.entity.js';
import { AccessLevel } from '../core/access-level.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import type { NamespacesService } from '../namespaces/namespaces.service.js';
import { ProjectCustomAttribute } from '../projects/custom-attribute.entity.js';
import { Project } from '../projects/project.entity.js';
import { orderBySimilarity, whereProjectMatches, type ProjectView } from '../projects/projects.service.js';
import type { CoreDeps } from '../core/family.js';
import { User } from '../users/user.entity.js';
import {
  applySettingParams,
  GROUP_SETTING_DEFAULTS,
  groupSettings,
  subgroupCreationMinimum,
} from './group-settings.js';
import { containing, escapeLike } from '../core/search.js';
import { isUniqueViolation } from '../db/errors.js';

type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;
export type ListGroupsParams = Query<'listGroups'>;
export type ListSubgroupsParams = Query<'listSubgroups'>;
export type ListGroupProjectsParams = Query<'listGroupProjects'>;
export type DeleteGroupParams = Query<'deleteGroup'>;
export type CreateGroupParams = NonNullable<
  operations['createGroup']['requestBody']
>['content']['application/json'];
export type UpdateGroupParams = NonNullable<
  operations['updateGroup']['requestBody']
>['content']['application/json'];

/** A group as one caller sees it. */
export interface GroupView {
  group: Namespace;
  subject: Subject;
}

/** A group with what its detail shape embeds. */
export interface GroupDetails extends GroupView {
  projects?: ProjectView[];
  sharedProjects?: ProjectView[];
}

export type GroupStatisticsJson = components['schemas']['GroupStatistics'];

export interface GroupListItem {
  group: Namespace;
  statistics?: GroupStatisticsJson;
}

/** The lists of groups share their parameters; only `/groups` has `top_level_only`. */
type GroupListParams = ListSubgroupsParams & { top_level_only?: boolean };

/** Embedded project lists of the detail shape stop here, as in GitLab. */
const DETAIL_PROJECTS_LIMIT = 100;
/** Memberships of the projects `$1` and the groups `$2`. */
const MEMBERS_OF = `((m.source_type = 'Project' AND m.source_id = ANY($1::int[]))
  OR (m.source_type = 'Namespace' AND m.source_id = ANY($2::int[])))`;
/** Projects shared with `:groupId` through a link that has not expired. */
const sharedWithGroupSql = `SELECT l.project_id FROM project_group_links l
  WHERE l.group_id = :groupId AND ${activeSql('l')}`;

// Gitlab::PathRegex: routes a top-level group path would mask, and the words of project routes.
const TOP_LEVEL_ROUTES = new Set(
  (
    '- .well-known 404.html 422.html 500.html 502.html 503.html admin api apple-touch-icon-precomposed.png ' +
    'apple-touch-icon.png assets dashboard deploy.html explore favicon.ico favicon.png files groups ' +
    'health_check help import jwt login oauth profile projects public robots.txt s search sitemap ' +
    'sitemap.xml sitemap.xml.gz slash-command-logo.png snippets unsubscribes uploads users v2'
  ).split(' '),
);
const GROUP_PATH_WORDS = new Set(
  '- badges blame blob builds commits create create_dir edit files find_file new preview raw refs tree update wikis'.split(
    ' ',
  ),
);

const PATH_PATTERN = /^(?:[a-zA-Z0-9_.][a-zA-Z0-9_.-]*[a-zA-Z0-9_-]|[a-zA-Z0-9_])$/;
const PATH_MESSAGE =
  "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.";
const NAME_PATTERN = /^[\p{L}\p{N}\u{00A9}-\u{1F9FF}_][\p{L}\p{N}\p{Pd}\u{00A9}-\u{1F9FF}_(). ]*$/u;
const NAME_MESSAGE =
  "can contain only letters, digits, emoji, '_', '.', dash, space, parenthesis. It must start with letter, digit, emoji or '_'.";
const tooLong = (max: number) => `is too long (maximum is ${max} characters)`;

/** A validation hash as Ruby prints it: GitLab embeds that in the message of a failed group creation. */
function rubyInspect(errors: Record<string, string[]>): string {
  const entries = Object.entries(errors).map(
    ([key, messages]) => `:${key}=>[${messages.map((m) => JSON.stringify(m)).join(', ')}]`,
  );
  return `{${entries.join(', ')}}`;
}

/** `skip_groups[]=1&skip_groups[]=2` and `skip_groups=1,2` alike. */
function skippedIds(values: Array<number | string> | undefined): number[] {
  return recordIds(values);
}

const PROJECT_ORDER_COLUMNS: Record<string, string> = {
  id: 'p.id',
  name: 'p.name',
  path: 'p.path',
  created_at: 'p.created_at',
  updated_at: 'p.updated_at',
  last_activity_at: 'p.last_activity_at',
  star_count: 'p.star_count',
};

export class GroupsService {
  private readonly dataSource: DataSource;
  private readonly events: Events;
  constructor(
    deps: CoreDeps,
    private readonly storage: RepositoryStorage,
    private readonly namespaces: NamespacesService,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
  }

  /** One group by integer id or full path; 404 `Group Not Found` unless the caller may see it. */
  async find(
    caller: Caller,
    id: string | number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<GroupView> {
    const key = String(id);
    const query = manager.getRepository(Namespace).createQueryBuilder('g').where(`g.kind = 'group'`);
    const numeric = recordId(key);
    if (numeric !== undefined) query.andWhere('g.id = :id', { id: numeric });
    else query.andWhere('lower(g.full_path) = lower(:path)', { path: key });
    const group = await query.getOne();
    if (!group || (group.markedForDeletionAt && !isAdmin(caller))) throw notFound('Group');
    const subject = await groupSubject(manager, caller, group);
    if (!canSee(caller, subject)) throw notFound('Group');
    return { group, subject };
  }

  /** The detail of one group, with the projects it embeds unless `withProjects` is false. */
  async detail(caller: Caller, view: GroupView, withProjects = true): Promise<GroupDetails> {
    if (!withProjects) return view;
    const groupId = view.group.id;
    const [projects, sharedProjects] = await Promise.all([
      this.embeddedProjects(caller, (q) => q.andWhere('p.namespace_id = :groupId', { groupId })),
      this.embeddedProjects(caller, (q) => q.andWhere(`p.id IN (${sharedWithGroupSql})`, { groupId })),
    ]);
    return { ...view, projects, sharedProjects };
  }

  /**
   * `GET /groups` and, with `within`, a group's subgroups or descendants. Which groups a caller gets
   * follows GitLab's GroupsFinder: see the spec of listGroups.
   */
  async list(
    caller: Caller,
    params: GroupListParams,
    request: RequestInfo,
    within?: { parent: Namespace; descendants: boolean },
  ): Promise<Page<GroupListItem>> {
    const user = caller.user;
    const admin = isAdmin(caller);
    const query = this.dataSource.getRepository(Namespace).createQueryBuilder('g').where(`g.kind = 'group'`);
    if (!admin) query.andWhere('g.marked_for_deletion_at IS NULL');

    if (params.owned) {
      if (!user) query.andWhere('FALSE');
      else
        query.andWhere(`g.id IN (${directGroupMembershipsSql('ownerLevel')})`, {
          callerId: user.id,
          ownerLevel: AccessLevel.Owner,
        });
    } else if (params.min_access_level !== undefined && user) {
      query.andWhere(`g.traversal_ids && ARRAY(${directGroupMembershipsSql('minAccess')})`, {
        callerId: user.id,
        minAccess: params.min_access_level,
      });
    } else if (!user || (params.all_available ?? admin)) {
      whereGroupVisible(query, caller, 'g');
    } else {
      query.andWhere(groupMembershipSql('g'), { callerId: user.id });
    }

    if (within?.descendants)
      query.andWhere('g.traversal_ids @> ARRAY[CAST(:parentId AS integer)] AND g.id <> :parentId', {
        parentId: within.parent.id,
      });
    else if (within) query.andWhere('g.parent_id = :parentId', { parentId: within.parent.id });
    if (params.top_level_only) query.andWhere('g.parent_id IS NULL');
    const skipped = skippedIds(params.skip_groups);
    if (skipped.length)
      query.andWhere('NOT (g.id = ANY(CAST(:skipped AS integer[])))', { skipped: skipped.map(String) });
    if (params.visibility)
      query.andWhere('g.visibility_level = :visibility', { visibility: Visibility[params.visibility] });
    const search = params.search?.trim();
    if (search) {
      const fields = ['g.name', 'g.path', ...(within ? [] : ['g.full_path'])];
      query.andWhere(`(${fields.map((f) => `${f} ILIKE :search`).join(' OR ')})`, {
        search: containing(search),
      });
    }

    const orderBy = params.order_by === 'similarity' && !search ? 'name' : (params.order_by ?? 'name');
    if (orderBy === 'similarity') {
      query
        .addSelect(
          `CASE WHEN lower(g.path) = :simExact OR lower(g.name) = :simExact THEN 3
             WHEN lower(g.path) LIKE :simPrefix OR lower(g.name) LIKE :simPrefix THEN 2 ELSE 1 END`,
          'similarity',
        )
        .setParameters({
          simExact: search!.toLowerCase(),
          simPrefix: `${escapeLike(search!.toLowerCase())}%`,
        })
        .orderBy('similarity', 'DESC')
        .addOrderBy('g.id', 'ASC');
    } else {
      const direction = (params.sort ?? 'asc').toUpperCase() as 'ASC' | 'DESC';
      query.orderBy(`g.${orderBy}`, direction);
      if (orderBy !== 'id') query.addOrderBy('g.id', 'ASC');
    }

    const page = await paginateOffset(query, params, request);
    const statistics =
      params.statistics && admin ? await this.statistics(page.items.map((g) => g.id)) : undefined;
    return {
      headers: page.headers,
      items: page.items.map((group) => ({ group, statistics: statistics?.get(group.id) })),
    };
  }

  /** Storage of the projects directly in each group, summed, in one query. */
  private async statistics(groupIds: number[]): Promise<Map<number, GroupStatisticsJson>> {
    const byGroup = new Map<number, GroupStatisticsJson>();
    if (groupIds.length === 0) return byGroup;
    const columns = [
      'storage_size',
      'repository_size',
      'wiki_size',
      'lfs_objects_size',
      'job_artifacts_size',
      'pipeline_artifacts_size',
      'packages_size',
      'snippets_size',
      'uploads_size',
    ] as const;
    const rows: Array<Record<string, string | number>> = await this.dataSource.query(
      `SELECT n.id, ${columns.map((c) => `COALESCE(sum(s.${c}), 0) AS ${c}`).join(', ')}
       FROM namespaces n
       LEFT JOIN projects p ON p.namespace_id = n.id
       LEFT JOIN project_statistics s ON s.project_id = p.id
       WHERE n.id = ANY($1::int[])
       GROUP BY n.id`,
      [groupIds],
    );
    for (const row of rows) {
      const stats = Object.fromEntries(columns.map((c) => [c, Number(row[c])])) as GroupStatisticsJson;
      byGroup.set(Number(row.id), stats);
    }
    return byGroup;
  }

  /** Subgroups (`descendants` false) or all descendants of a group the caller can see. */
  async listWithin(
    caller: Caller,
    { group }: GroupView,
    params: ListSubgroupsParams,
    request: RequestInfo,
    descendants: boolean,
  ): Promise<Page<GroupListItem>> {
    return this.list(caller, params, request, { parent: group, descendants });
  }

  async create(caller: Caller, params: CreateGroupParams): Promise<GroupDetails> {
    const user = caller.user!;
    let parent: Namespace | null = null;
    if (params.parent_id !== undefined) {
      const { group, subject } = await this.find(caller, params.parent_id);
      const needed = subgroupCreationMinimum(groupSettings(group.settings).subgroup_creation_level);
      if (!isAdmin(caller) && !meetsAccessLevel(subject.accessLevel, needed)) throw forbidden();
      parent = group;
    } else if (!user.admin && (user.external || !user.canCreateGroup)) {
      throw forbidden();
    }
    const visibilityLevel = Visibility[params.visibility ?? 'private'];
    const failed = (errors: Record<string, string[]>) =>
      new ApiError(400, { message: `Failed to save group ${rubyInspect(errors)}` });
    const errors = this.validate(
      { name: params.name, path: params.path, description: params.description, visibilityLevel },
      parent,
    );
    if (Object.keys(errors).length) throw failed(errors);

    return this.dataSource.transaction(async (tx) => {
      const taken = await this.taken(tx, params.name, params.path, parent);
      if (Object.keys(taken).length) throw failed(taken);
      let group: Namespace;
      try {
        group = await this.namespaces.createGroup(
          {
            name: params.name,
            path: params.path,
            parentId: parent?.id ?? null,
            visibilityLevel,
            description: params.description ?? '',
            settings: applySettingParams(GROUP_SETTING_DEFAULTS, params),
          },
          tx,
        );
      } catch (err) {
        // A concurrent create took the path between the check and the insert.
        if (isUniqueViolation(err)) throw failed({ path: ['has already been taken'] });
        throw err;
      }
      await tx.getRepository(Member).insert({
        sourceType: 'Namespace',
        sourceId: group.id,
        userId: user.id,
        accessLevel: AccessLevel.Owner,
        createdById: user.id,
      });
      group = await tx.getRepository(Namespace).findOneByOrFail({ id: group.id });
      return { group, subject: await groupSubject(tx, caller, group) };
    });
  }

  async update(caller: Caller, { group }: GroupView, params: UpdateGroupParams): Promise<GroupDetails> {
    const name = params.name ?? group.name;
    const path = params.path ?? group.path;
    const visibilityLevel = params.visibility ? Visibility[params.visibility] : group.visibilityLevel;
    const description = params.description ?? group.description;

    await this.dataSource.transaction(async (tx) => {
      const parent = group.parentId
        ? await tx.getRepository(Namespace).findOneByOrFail({ id: group.parentId })
        : null;
      const errors = this.validate({ name, path, description, visibilityLevel }, parent);
      if (!errors.visibility_level && visibilityLevel < group.visibilityLevel) {
        const message = await this.visibilityBelowContents(tx, group, visibilityLevel);
        if (message) errors.visibility_level = [message];
      }
      if (Object.keys(errors).length) throw validationFailed(errors);
      const taken = await this.taken(tx, name, path, parent, group.id);
      if (Object.keys(taken).length) throw validationFailed(taken);
      try {
        await this.namespaces.renameGroup(group, name, path, tx);
      } catch (err) {
        if (isUniqueViolation(err)) throw validationFailed({ path: ['has already been taken'] });
        throw err;
      }
      const settings = { ...applySettingParams(groupSettings(group.settings), params) };
      await tx
        .getRepository(Namespace)
        .save(Object.assign(group, { description, visibilityLevel, settings }));
    });
    // Read again: the rename and settings changed what the caller sees.
    return this.detail(caller, await this.find(caller, group.id));
  }

  /**
   * Deletes the group, everything below it and their projects, in one transaction, with the bot users
   * of access tokens on any of them. Rows that point at the groups or projects without a foreign key
   * (members) go explicitly; the rest cascade. Each project's repository goes as a project deletion's
   * does: moved out of its path once the rows are gone, removed by its `project.deleted` job.
   */
  async remove(caller: Caller, { group }: GroupView, params: DeleteGroupParams): Promise<void> {
    if (params.permanently_remove && params.full_path !== group.fullPath) {
      throw new ApiError(400, {
        message: '`full_path` is incorrect. You must enter the complete path for the subgroup.',
      });
    }
    const deleted = await this.dataSource.transaction(async (tx) => {
      // Locks in id order, rows before members, as every deletion takes them: no deadlock between two.
      const groups: Array<{ id: number; depth: number }> = await tx.query(
        `SELECT id, cardinality(traversal_ids) AS depth FROM namespaces
         WHERE traversal_ids @> ARRAY[$1::int] ORDER BY id FOR UPDATE`,
        [group.id],
      );
      const groupIds = groups.map((g) => Number(g.id));
      const projects: Array<{ id: number; repository_storage: string; full_path: string }> = await tx.query(
        `SELECT p.id, p.repository_storage, n.full_path || '/' || p.path AS full_path
         FROM projects p JOIN namespaces n ON n.id = p.namespace_id
         WHERE p.namespace_id = ANY($1::int[]) ORDER BY p.id FOR UPDATE OF p`,
        [groupIds],
      );
      const projectIds = projects.map((p) => Number(p.id));
      // Forks elsewhere that borrow objects from these repositories get their own copies first (in
      // each project's job); those repositories stay at their paths until then.
      const borrowers: Array<{ id: number; repository_storage: string; lender: number }> = await tx.query(
        `SELECT id, repository_storage, borrows_objects_from_id AS lender FROM projects
         WHERE borrows_objects_from_id = ANY($1::int[]) AND NOT id = ANY($1::int[]) ORDER BY id`,
        [projectIds],
      );
      const bots: Array<{ user_id: number }> = await tx.query(
        `SELECT DISTINCT m.user_id FROM members m JOIN users u ON u.id = m.user_id
         WHERE u.user_type = 'project_bot' AND ${MEMBERS_OF}`,
        [projectIds, groupIds],
      );
      await tx.query(`DELETE FROM members m WHERE ${MEMBERS_OF}`, [projectIds, groupIds]);
      await tx.query('DELETE FROM projects WHERE id = ANY($1::int[])', [projectIds]);
      // A parent cannot go while it has children: deepest first.
      const depths = [...new Set(groups.map((g) => Number(g.depth)))].sort((a, b) => b - a);
      for (const depth of depths) {
        const ids = groups.filter((g) => Number(g.depth) === depth).map((g) => Number(g.id));
        await tx.query('DELETE FROM namespaces WHERE id = ANY($1::int[])', [ids]);
      }
      if (bots.length) await tx.getRepository(User).delete(bots.map((bot) => Number(bot.user_id)));
      for (const project of projects) {
        await this.events.publish(tx, 'project.deleted', {
          projectId: Number(project.id),
          userId: caller.user?.id ?? null,
          fullPath: project.full_path,
          repository: { storage: project.repository_storage },
          borrowers: borrowers
            .filter((borrower) => Number(borrower.lender) === Number(project.id))
            .map((borrower) => ({ storage: borrower.repository_storage, projectId: Number(borrower.id) })),
        });
      }
      const lenders = new Set(borrowers.map((borrower) => Number(borrower.lender)));
      return projects
        .filter((p) => !lenders.has(Number(p.id)))
        .map((p) => ({ storage: p.repository_storage, projectId: Number(p.id) }));
    });
    await this.storage.retireDeleted(deleted);
  }

  /** `GET /groups/:id/projects`: see the spec of listGroupProjects for the rules. */
  async projects(
    caller: Caller,
    { group }: GroupView,
    params: ListGroupProjectsParams,
    request: RequestInfo,
  ): Promise<Page<ProjectView>> {
    const user = caller.user;
    const query = whereProjectVisible(this.projectQuery(), caller, 'p', 'n');
    if (user) query.setParameter('callerId', user.id);
    query.andWhere('p.marked_for_deletion_at IS NULL');

    const sources = [
      params.include_subgroups
        ? 'n.traversal_ids @> ARRAY[CAST(:groupId AS integer)]'
        : 'p.namespace_id = :groupId',
    ];
    if (params.include_ancestor_groups) sources.push('p.namespace_id = ANY(CAST(:ancestorIds AS integer[]))');
    if (params.with_shared ?? true) sources.push(`p.id IN (${sharedWithGroupSql})`);
    query.andWhere(`(${sources.join(' OR ')})`, {
      groupId: group.id,
      ancestorIds: group.traversalIds.map(String),
    });

    if (params.archived !== undefined)
      query.andWhere('p.archived = :archived', { archived: params.archived });
    if (params.visibility)
      query.andWhere('p.visibility_level = :visibility', { visibility: Visibility[params.visibility] });
    if (params.with_issues_enabled)
      query.andWhere(`COALESCE((p.settings->>'issues_enabled')::boolean, TRUE)`);
    if (params.with_merge_requests_enabled)
      query.andWhere(`COALESCE((p.settings->>'merge_requests_enabled')::boolean, TRUE)`);
    const topics = (params.topic ?? '')
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean);
    if (topics.length)
      query.andWhere('ARRAY(SELECT lower(t) FROM unnest(p.topics) t) @> CAST(:topics AS text[])', { topics });
    // Nothing can be starred yet.
    if (params.starred) query.andWhere('FALSE');
    if ((params.owned || params.min_access_level !== undefined) && !user) query.andWhere('FALSE');
    else if (params.owned) {
      // The Owner role implies any min_access_level, so owned alone decides.
      query.andWhere(
        `((n.kind = 'user' AND n.owner_id = :callerId) OR ${projectMembershipSql('p', 'n', true)})`,
        {
          minAccess: AccessLevel.Owner,
        },
      );
    } else if (params.min_access_level !== undefined) {
      query.andWhere(projectMembershipSql('p', 'n', true), { minAccess: params.min_access_level });
    }

    const terms = whereProjectMatches(query, params.search);

    const orderBy = params.order_by ?? 'created_at';
    if (orderBy === 'similarity' && terms.length) {
      orderBySimilarity(query, params.search!, 'DESC').addOrderBy('p.id', 'DESC');
    } else if (orderBy === 'similarity') {
      query.orderBy('p.name', 'ASC').addOrderBy('p.id', 'ASC');
    } else {
      const direction = (params.sort ?? 'desc').toUpperCase() as 'ASC' | 'DESC';
      query.orderBy(PROJECT_ORDER_COLUMNS[orderBy], direction);
      if (orderBy !== 'id') query.addOrderBy('p.id', direction);
    }

    const page = await paginateOffset(query, params, request);
    const withAttributes = Boolean(params.with_custom_attributes) && isAdmin(caller);
    return { headers: page.headers, items: await this.projectViews(caller, page.items, withAttributes) };
  }

  private projectQuery(manager: EntityManager = this.dataSource.manager): SelectQueryBuilder<Project> {
    return manager
      .getRepository(Project)
      .createQueryBuilder('p')
      .innerJoinAndSelect('p.namespace', 'n')
      .leftJoinAndSelect('n.owner', 'owner');
  }

  /** Projects the caller may see, newest first, at most DETAIL_PROJECTS_LIMIT. */
  private async embeddedProjects(
    caller: Caller,
    where: (query: SelectQueryBuilder<Project>) => SelectQueryBuilder<Project>,
  ): Promise<ProjectView[]> {
    const query = where(whereProjectVisible(this.projectQuery(), caller, 'p', 'n'))
      .andWhere('p.marked_for_deletion_at IS NULL')
      .orderBy('p.created_at', 'DESC')
      .addOrderBy('p.id', 'DESC')
      .take(DETAIL_PROJECTS_LIMIT);
    return this.projectViews(caller, await query.getMany(), false);
  }

  /** The caller's access to each project, and custom attributes when asked, in batched queries. */
  private async projectViews(
    caller: Caller,
    projects: Project[],
    withAttributes: boolean,
  ): Promise<ProjectView[]> {
    const ids = projects.map((p) => p.id);
    const levels = await projectAccessLevels(this.dataSource.manager, caller, ids);
    const attributes = new Map<number, ProjectCustomAttribute[]>();
    if (withAttributes && ids.length) {
      const rows = await this.dataSource
        .getRepository(ProjectCustomAttribute)
        .createQueryBuilder('a')
        .where('a.project_id IN (:...ids)', { ids })
        .orderBy('a.key', 'ASC')
        .getMany();
      for (const row of rows) attributes.set(row.projectId, [...(attributes.get(row.projectId) ?? []), row]);
    }
    return projects.map((project) => ({
      project: project as ProjectView['project'],
      accessLevel: levels.get(project.id)?.level ?? 0,
      customAttributes: withAttributes ? (attributes.get(project.id) ?? []) : undefined,
      showStatistics: false,
    }));
  }

  /** Format and length rules of a group's own fields, keyed as GitLab keys them. */
  private validate(
    fields: { name: string; path: string; description?: string; visibilityLevel: number },
    parent: Namespace | null,
  ): Record<string, string[]> {
    const errors: Record<string, string[]> = {};
    const { name, path } = fields;
    if (!name.trim()) errors.name = ["can't be blank"];
    else if (name.length > 255) errors.name = [tooLong(255)];
    else if (!NAME_PATTERN.test(name)) errors.name = [NAME_MESSAGE];
    const reserved = parent ? GROUP_PATH_WORDS : TOP_LEVEL_ROUTES;
    if (!path) errors.path = ["can't be blank"];
    else if (path.length > 255) errors.path = [tooLong(255)];
    else if (!PATH_PATTERN.test(path) || /\.(git|atom)$/i.test(path)) errors.path = [PATH_MESSAGE];
    else if (reserved.has(path.toLowerCase())) errors.path = [`${path} is a reserved name`];
    if ((fields.description ?? '').length > 500) errors.description = [tooLong(500)];
    if (parent && fields.visibilityLevel > parent.visibilityLevel) {
      errors.visibility_level = [
        `${visibilityName(fields.visibilityLevel)} is not allowed since the parent group has a ${visibilityName(parent.visibilityLevel)} visibility.`,
      ];
    }
    return errors;
  }

  /**
   * Paths are unique among top-level namespaces (users' included), or within the parent among its
   * subgroups and projects; subgroup names are unique among siblings.
   */
  private async taken(
    tx: EntityManager,
    name: string,
    path: string,
    parent: Namespace | null,
    exceptId = 0,
  ): Promise<Record<string, string[]>> {
    const errors: Record<string, string[]> = {};
    const siblings: Array<{ name: string; path: string }> = await tx.query(
      `SELECT name, path FROM namespaces
       WHERE id <> $1 AND parent_id IS NOT DISTINCT FROM $2 AND (lower(path) = lower($3) OR name = $4)`,
      [exceptId, parent?.id ?? null, path, name],
    );
    if (parent && siblings.some((s) => s.name === name)) errors.name = ['has already been taken'];
    let pathTaken = siblings.some((s) => s.path.toLowerCase() === path.toLowerCase());
    if (!pathTaken && parent) {
      const projects: unknown[] = await tx.query(
        'SELECT 1 FROM projects WHERE namespace_id = $1 AND lower(path) = lower($2) LIMIT 1',
        [parent.id, path],
      );
      pathTaken = projects.length > 0;
    }
    if (pathTaken) errors.path = ['has already been taken'];
    return errors;
  }

  /** Why a group may not become `level`: a subgroup or a project inside it is more visible. */
  private async visibilityBelowContents(
    tx: EntityManager,
    group: Namespace,
    level: number,
  ): Promise<string | null> {
    const [row]: Array<{ groups: boolean; projects: boolean }> = await tx.query(
      `SELECT
         EXISTS (SELECT 1 FROM namespaces d WHERE d.traversal_ids @> ARRAY[$1::int] AND d.id <> $1
           AND d.visibility_level > $2) AS groups,
         EXISTS (SELECT 1 FROM projects p JOIN namespaces d ON d.id = p.namespace_id
           WHERE d.traversal_ids @> ARRAY[$1::int] AND p.visibility_level > $2) AS projects`,
      [group.id, level],
    );
    const name = visibilityName(level);
    if (row.groups) return `${name} is not allowed since there are sub-groups with higher visibility.`;
    if (row.projects)
      return `${name} is not allowed since this group contains projects with higher visibility.`;
    return null;
  }
}
