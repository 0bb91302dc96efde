import { type DataSource, type EntityManager, type ObjectLiteral, type SelectQueryBuilder } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import type { operations } from '../../generated/openapi.js';
import type { Config } from '../config.js';
import type { Events } from '../core/events.js';
import {
  activeSql,
  authorizeProject,
  canReadStatistics,
  canSee,
  groupAccessLevel,
  isAdmin,
  isMemberLevel,
  meetsAccessLevel,
  projectAccess,
  projectAccessLevels,
  projectMembershipSql,
  type Subject,
  Visibility,
  visibilityName,
  whereProjectVisible,
} from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import {
  ApiError,
  badParameter,
  forbidden,
  methodNotAllowed,
  notFound,
  unauthorized,
  validationFailed,
} from '../core/errors.js';
import { isKeyset, paginateKeyset, paginateOffset, type Page, type RequestInfo } from '../core/pagination.js';
import { Member } from '../members/member.entity.js';
import { AccessLevel } from '../core/access-level.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import { writeRepositoryState } from '../git/repository-state.js';
import { openGitRepository, type DetectedLicense } from '../git/repository.js';
import { groupSettings, newRunnersToken, projectCreationMinimum } from '../groups/group-settings.js';
import type { RepositoryStorage } from '../git/storage.js';
import {
  ProtectedBranch,
  ProtectedBranchAccessLevel,
} from '../protected_branches/protected-branch.entity.js';
import type { CoreDeps } from '../core/family.js';
import { ProjectGroupLink } from '../members/project-group-link.entity.js';
import { User } from '../users/user.entity.js';
import { ProjectCustomAttribute } from './custom-attribute.entity.js';
import { ProjectStatistics } from './project-statistics.entity.js';
import { Project } from './project.entity.js';
import { settingsFromParams } from './project-settings.js';
import { containing, escapeLike } from '../core/search.js';
import { isUniqueViolation } from '../db/errors.js';

export type ListProjectsParams = NonNullable<operations['listProjects']['parameters']['query']>;
export type CreateProjectParams = NonNullable<
  operations['createProject']['requestBody']
>['content']['application/json'];
export type UpdateProjectParams = NonNullable<
  operations['updateProject']['requestBody']
>['content']['application/json'];
export type DeleteProjectParams = NonNullable<operations['deleteProject']['parameters']['query']>;

/** A project as one caller sees it: what the presenter needs to decide which fields to show. */
export interface ProjectView {
  project: Project & { namespace: Namespace };
  accessLevel: number;
  /** Present when an administrator asked for them. */
  customAttributes?: ProjectCustomAttribute[];
  /** Direct and inherited levels, known when a single project was loaded. */
  projectAccess?: number;
  groupAccess?: number;
  showStatistics: boolean;
  /** Active shares of the project with groups, each with its group. */
  sharedWithGroups?: ProjectGroupLink[];
}

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

const PATH_PATTERN = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
const PATH_MESSAGE =
  "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', '.', end in '.git' or end in '.atom'";
const NAME_PATTERN = /^[\p{L}\p{N}\p{Emoji_Presentation}_][\p{L}\p{N}\p{Emoji_Presentation}_.+\- ]*$/u;
const NAME_MESSAGE =
  "can contain only letters, digits, emoji, '_', '.', '+', dashes, or spaces. It must start with a letter, digit, emoji, or '_'.";

export function pathFromName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
}

export class ProjectsService {
  private readonly dataSource: DataSource;
  private readonly config: Config;
  private readonly events: Events;

  constructor(
    deps: CoreDeps,
    private readonly storage: RepositoryStorage,
  ) {
    this.dataSource = deps.dataSource;
    this.config = deps.config;
    this.events = deps.events;
  }

  private baseQuery(manager: EntityManager = this.dataSource.manager): SelectQueryBuilder<Project> {
    return manager
      .getRepository(Project)
      .createQueryBuilder('p')
      .innerJoinAndSelect('p.namespace', 'n')
      .leftJoinAndSelect('n.owner', 'owner');
  }

  /** One project by integer id or full path; 404 unless the caller may see it. */
  async find(
    caller: Caller,
    id: string | number,
    options: { statistics?: boolean; customAttributes?: boolean; shares?: boolean } = {},
  ): Promise<ProjectView> {
    const query = this.baseQuery();
    const key = String(id);
    if (/^\d+$/.test(key)) query.where('p.id = :id', { id: Number(key) });
    else {
      const slash = key.lastIndexOf('/');
      if (slash <= 0) throw notFound('Project');
      query
        .where('lower(n.full_path) = lower(:namespacePath)', { namespacePath: key.slice(0, slash) })
        .andWhere('lower(p.path) = lower(:projectPath)', { projectPath: key.slice(slash + 1) });
    }
    const project = (await query.getOne()) as ProjectView['project'] | null;
    if (!project || (project.markedForDeletionAt && !isAdmin(caller))) throw notFound('Project');
    const access = await projectAccess(this.dataSource.manager, caller, project);
    if (!canSee(caller, { visibilityLevel: project.visibilityLevel, accessLevel: access.level }))
      throw notFound('Project');
    const view: ProjectView = {
      project,
      accessLevel: access.level,
      projectAccess: access.project,
      groupAccess: access.group,
      showStatistics: false,
    };
    return this.details(caller, view, options);
  }

  /**
   * What a single project's read shows besides the resolved project (statistics, custom attributes,
   * shares), loaded for a project already resolved for the caller.
   */
  async details(
    caller: Caller,
    view: ProjectView,
    options: { statistics?: boolean; customAttributes?: boolean; shares?: boolean },
  ): Promise<ProjectView> {
    const { project } = view;
    const showStatistics = Boolean(options.statistics) && canReadStatistics(caller, view.accessLevel);
    if (showStatistics)
      project.statistics =
        (await this.dataSource.getRepository(ProjectStatistics).findOneBy({ projectId: project.id })) ??
        undefined;
    const customAttributes =
      options.customAttributes && isAdmin(caller)
        ? ((await this.customAttributes([project.id])).get(project.id) ?? [])
        : undefined;
    return {
      ...view,
      customAttributes,
      showStatistics,
      // Only a project that is shown needs its shares; repository reads and writes do not.
      sharedWithGroups: options.shares
        ? ((await this.sharedWithGroups([project.id])).get(project.id) ?? [])
        : undefined,
    };
  }

  /** The license file at the root of the default branch, identified (a single project's read). */
  license(view: ProjectView): Promise<DetectedLicense | null> {
    const { project } = view;
    const dir = this.storage.diskPath(project.repositoryStorage, project.id);
    return openGitRepository(dir).license(project.defaultBranch);
  }

  /** The project as the abilities see it. */
  subject(view: ProjectView): Subject {
    return {
      visibilityLevel: view.project.visibilityLevel,
      accessLevel: view.accessLevel,
      archived: view.project.archived,
    };
  }

  /** The active shares of many projects with groups, in one query. */
  async sharedWithGroups(projectIds: number[]): Promise<Map<number, ProjectGroupLink[]>> {
    const byProject = new Map<number, ProjectGroupLink[]>();
    if (projectIds.length === 0) return byProject;
    const links = await this.dataSource
      .getRepository(ProjectGroupLink)
      .createQueryBuilder('l')
      .innerJoinAndSelect('l.group', 'g')
      .where('l.project_id IN (:...projectIds)', { projectIds })
      .andWhere(activeSql('l'))
      .orderBy('l.id', 'ASC')
      .getMany();
    for (const link of links) {
      const list = byProject.get(link.projectId);
      if (list) list.push(link);
      else byProject.set(link.projectId, [link]);
    }
    return byProject;
  }

  async update(caller: Caller, view: ProjectView, params: UpdateProjectParams): Promise<ProjectView> {
    const project = view.project;
    const visibilityLevel =
      params.visibility === undefined ? project.visibilityLevel : Visibility[params.visibility];
    if (visibilityLevel !== project.visibilityLevel) {
      authorizeProject(caller, 'change_visibility_level', this.subject(view));
      if (visibilityLevel > project.namespace.visibilityLevel) {
        throw validationFailed({
          visibility_level: [
            `${params.visibility} is not allowed in a ${visibilityName(project.namespace.visibilityLevel)} group.`,
          ],
        });
      }
    }
    const name = params.name ?? project.name;
    const path = params.path ?? project.path;
    checkNameAndPath(name, path);
    await this.dataSource.transaction(async (tx) => {
      await assertAvailable(tx, project.namespaceId, name, path, project.id);
      const changes: QueryDeepPartialEntity<Project> = {
        name,
        path,
        visibilityLevel,
        settings: { ...project.settings, ...settingsFromParams(params as Record<string, unknown>) },
      };
      if (params.description !== undefined) changes.description = params.description;
      if (params.default_branch !== undefined) changes.defaultBranch = params.default_branch;
      const topics = params.topics ?? params.tag_list;
      if (topics !== undefined) changes.topics = dedupeTopics(topics);
      await saveUnique(() => tx.getRepository(Project).update(project.id, changes));
    });
    return this.find(caller, project.id, { shares: true });
  }

  async setArchived(caller: Caller, view: ProjectView, archived: boolean): Promise<ProjectView> {
    if (view.project.archived !== archived)
      await this.dataSource.getRepository(Project).update(view.project.id, { archived });
    return this.find(caller, view.project.id, { shares: true });
  }

  /**
   * Deletes at once, with the project's repository, members and the bot users of its access tokens;
   * shares, statistics and custom attributes go with the row. The repository is moved aside first, put
   * back if the rows cannot be deleted, and removed by the `project.deleted` subscriber once they are.
   */
  async delete(caller: Caller, view: ProjectView, params: DeleteProjectParams): Promise<void> {
    const project = view.project;
    if (params.permanently_remove) {
      const fullPath = `${project.namespace.fullPath}/${project.path}`;
      if (!params.full_path || params.full_path !== fullPath)
        throw new ApiError(400, {
          message: '`full_path` is incorrect. You must enter the complete path for the project.',
        });
    }
    const trash = await this.storage.moveAside(project.repositoryStorage, project.id);
    try {
      await this.dataSource.transaction(async (tx) => {
        const bots: Array<{ user_id: number }> = await tx.query(
          `SELECT m.user_id FROM members m JOIN users u ON u.id = m.user_id
         WHERE m.source_type = 'Project' AND m.source_id = $1 AND u.user_type = 'project_bot'`,
          [project.id],
        );
        await tx.getRepository(Member).delete({ sourceType: 'Project', sourceId: project.id });
        await tx.getRepository(Project).delete(project.id);
        if (bots.length) await tx.getRepository(User).delete(bots.map((bot) => bot.user_id));
        await this.events.publish(tx, 'project.deleted', {
          projectId: project.id,
          userId: caller.user?.id ?? null,
          fullPath: `${project.namespace.fullPath}/${project.path}`,
          repository: trash.aside ? { storage: project.repositoryStorage, aside: trash.aside } : null,
        });
      });
    } catch (err) {
      await trash.restore();
      throw err;
    }
  }

  /** The custom attributes of many projects in one query, ordered by key. */
  async customAttributes(projectIds: number[]): Promise<Map<number, ProjectCustomAttribute[]>> {
    const byProject = new Map<number, ProjectCustomAttribute[]>();
    if (projectIds.length === 0) return byProject;
    const attributes = await this.dataSource
      .getRepository(ProjectCustomAttribute)
      .createQueryBuilder('a')
      .where('a.project_id IN (:...projectIds)', { projectIds })
      .orderBy('a.key', 'ASC')
      .getMany();
    for (const attribute of attributes) {
      const list = byProject.get(attribute.projectId);
      if (list) list.push(attribute);
      else byProject.set(attribute.projectId, [attribute]);
    }
    return byProject;
  }

  async list(caller: Caller, params: ListProjectsParams, request: RequestInfo): Promise<Page<ProjectView>> {
    const admin = isAdmin(caller);
    const query = whereProjectVisible(this.baseQuery(), caller, 'p', 'n');
    if (caller.user) query.setParameter('callerId', caller.user.id);
    const isMember = projectMembershipSql('p', 'n');

    if (params.archived !== undefined)
      query.andWhere('p.archived = :archived', { archived: params.archived });
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
    if (params.with_issues_enabled)
      query.andWhere(`COALESCE((p.settings->>'issues_enabled')::boolean, TRUE)`);
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

    const page = isKeyset(params)
      ? await paginateKeyset(query, params, request, (last): Record<string, string> =>
          direction === 'ASC' ? { id_after: String(last.id) } : { id_before: String(last.id) },
        )
      : await paginateOffset(query, params, request);
    const ids = page.items.map((project) => project.id);
    const levels = await projectAccessLevels(this.dataSource.manager, caller, ids);
    const attributes = params.with_custom_attributes && admin ? await this.customAttributes(ids) : undefined;
    const shares = params.simple || !caller.user ? undefined : await this.sharedWithGroups(ids);
    return {
      headers: page.headers,
      items: page.items.map((project) => {
        const accessLevel = levels.get(project.id)?.level ?? 0;
        return {
          project: project as ProjectView['project'],
          accessLevel,
          customAttributes: attributes ? (attributes.get(project.id) ?? []) : undefined,
          showStatistics: Boolean(params.statistics) && canReadStatistics(caller, accessLevel),
          sharedWithGroups: shares?.get(project.id) ?? [],
        };
      }),
    };
  }

  async create(caller: Caller, params: CreateProjectParams): Promise<ProjectView> {
    const user = caller.user;
    if (!user) throw unauthorized();
    if (!params.name && !params.path) {
      throw badParameter('name, path are missing, at least one parameter must be provided');
    }
    const name = params.name || params.path!;
    const path = params.path || pathFromName(params.name!);
    checkNameAndPath(name, path);

    // The repository is made inside the transaction and removed if the transaction fails, so a row
    // never exists without its repository, nor a repository without its row.
    let repository: { storage: string; projectId: number } | undefined;
    try {
      return await this.dataSource.transaction(async (tx) => {
        const namespace = await this.targetNamespace(tx, caller, params.namespace_id);
        await this.checkPersonalLimit(tx, user, namespace);
        const visibilityLevel = Visibility[params.visibility ?? 'private'];
        if (visibilityLevel > namespace.visibilityLevel) {
          throw validationFailed({
            visibility_level: [
              `${params.visibility} is not allowed in a ${visibilityName(namespace.visibilityLevel)} group.`,
            ],
          });
        }
        await assertAvailable(tx, namespace.id, name, path);

        const projects = tx.getRepository(Project);
        const project = await saveUnique(() =>
          projects.save(
            projects.create({
              namespaceId: namespace.id,
              name,
              path,
              description: params.description ?? null,
              defaultBranch: params.default_branch ?? 'main',
              visibilityLevel,
              creatorId: user.id,
              topics: dedupeTopics(params.topics ?? params.tag_list ?? []),
              settings: settingsFromParams(params as Record<string, unknown>),
              runnersToken: newRunnersToken(),
            }),
          ),
        );
        await tx.getRepository(ProjectStatistics).insert({ projectId: project.id });
        if (namespace.kind === 'user') {
          await tx.getRepository(Member).insert({
            sourceType: 'Project',
            sourceId: project.id,
            userId: namespace.ownerId!,
            accessLevel: AccessLevel.Owner,
          });
        }
        await protectDefaultBranch(tx, project.id, project.defaultBranch!);
        const dir = await this.storage.create(project.repositoryStorage, project.id, project.defaultBranch!);
        repository = { storage: project.repositoryStorage, projectId: project.id };
        if (params.initialize_with_readme) {
          const readme = `# ${name}\n${params.description ? `\n${params.description}\n` : ''}`;
          await this.storage.initializeWithReadme(dir, project.defaultBranch!, readme, user);
          const state = await openGitRepository(dir).state(project.defaultBranch!);
          await writeRepositoryState(tx, project.id, state);
        }
        const created = (await this.baseQuery(tx)
          .where('p.id = :id', { id: project.id })
          .getOneOrFail()) as ProjectView['project'];
        const access = await projectAccess(tx, caller, created);
        await this.events.publish(tx, 'project.created', {
          projectId: created.id,
          userId: user.id,
          fullPath: `${created.namespace.fullPath}/${created.path}`,
        });
        return {
          project: created,
          accessLevel: access.level,
          projectAccess: access.project,
          groupAccess: access.group,
          showStatistics: false,
        };
      });
    } catch (err) {
      if (repository) await this.storage.remove(repository.storage, repository.projectId);
      throw err;
    }
  }

  /** The namespace to create in: the caller's own, or a group where the caller is Developer or above. */
  private async targetNamespace(
    tx: EntityManager,
    caller: Caller,
    namespaceId: number | undefined,
  ): Promise<Namespace> {
    const user = caller.user!;
    const namespaces = tx.getRepository(Namespace);
    if (namespaceId === undefined) {
      const own = await namespaces.findOne({ where: { ownerId: user.id, kind: 'user' } });
      if (!own) throw notFound('Namespace');
      return own;
    }
    const namespace = await namespaces.findOne({ where: { id: namespaceId } });
    if (!namespace) throw notFound('Namespace');
    if (user.admin) return namespace;
    if (namespace.kind === 'user') {
      if (namespace.ownerId === user.id) return namespace;
      throw notFound('Namespace');
    }
    const level = await groupAccessLevel(tx, caller, namespace);
    if (!isMemberLevel(level) && namespace.visibilityLevel < Visibility.internal) throw notFound('Namespace');
    const minimum = projectCreationMinimum(groupSettings(namespace.settings).project_creation_level);
    if (minimum === null || !meetsAccessLevel(level, minimum)) throw forbidden();
    return namespace;
  }

  /** External users have no personal projects; others up to their `projects_limit`. */
  private async checkPersonalLimit(tx: EntityManager, user: User, namespace: Namespace): Promise<void> {
    if (namespace.kind !== 'user' || namespace.ownerId !== user.id || user.admin) return;
    // GitLab's API answers `limit_reached` with 403 and the reasons as the message.
    if (user.external || user.projectsLimit === 0) {
      throw new ApiError(403, {
        message: [
          'Personal project creation is not allowed. Please contact your administrator with questions',
        ],
      });
    }
    const owned = await tx.getRepository(Project).count({ where: { namespaceId: namespace.id } });
    if (owned >= user.projectsLimit) {
      throw new ApiError(403, {
        message: [
          `Your project limit is ${user.projectsLimit} projects! Please contact your administrator to increase it`,
        ],
      });
    }
  }
}

/** GitLab's default protection of a new project's default branch: Maintainers push and merge. */
async function protectDefaultBranch(tx: EntityManager, projectId: number, branch: string): Promise<void> {
  const rule = await tx.getRepository(ProtectedBranch).save({ projectId, name: branch });
  await tx.getRepository(ProtectedBranchAccessLevel).insert(
    (['push', 'merge'] as const).map((action) => ({
      protectedBranchId: rule.id,
      action,
      accessLevel: AccessLevel.Maintainer,
    })),
  );
}

/**
 * Each word of `search` must appear in the path, name or description (or the namespace's full path);
 * returns the words.
 */
export function whereProjectMatches<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  search: string | undefined,
  withNamespaces = false,
): string[] {
  const terms = (search ?? '').split(/\s+/).filter(Boolean);
  const fields = ['p.path', 'p.name', 'p.description', ...(withNamespaces ? ['n.full_path'] : [])];
  terms.forEach((term, index) => {
    query.andWhere(`(${fields.map((f) => `${f} ILIKE :term${index}`).join(' OR ')})`, {
      [`term${index}`]: containing(term),
    });
  });
  return terms;
}

/** GitLab's `similarity` order: an exact path first, then names starting with the term, then the rest. */
export function orderBySimilarity<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  search: string,
  direction: 'ASC' | 'DESC',
): SelectQueryBuilder<T> {
  const term = search.trim().toLowerCase();
  return query
    .addSelect(
      `CASE WHEN lower(p.path) = :simExact THEN 3 WHEN lower(p.name) LIKE :simPrefix THEN 2 ELSE 1 END`,
      'similarity',
    )
    .setParameters({ simExact: term, simPrefix: `${escapeLike(term)}%` })
    .orderBy('similarity', direction);
}

function checkNameAndPath(name: string, path: string): void {
  const errors: Record<string, string[]> = {};
  if (!PATH_PATTERN.test(path) || /\.(git|atom)$/.test(path)) errors.path = [PATH_MESSAGE];
  if (!NAME_PATTERN.test(name)) errors.name = [NAME_MESSAGE];
  if (Object.keys(errors).length) throw validationFailed(errors);
}

/** Name and path are unique in a namespace, case-insensitively; `exceptId` is the project being renamed. */
async function assertAvailable(
  tx: EntityManager,
  namespaceId: number,
  name: string,
  path: string,
  exceptId?: number,
): Promise<void> {
  const query = tx
    .getRepository(Project)
    .createQueryBuilder('p')
    .where('p.namespace_id = :ns', { ns: namespaceId })
    .andWhere('(lower(p.path) = lower(:path) OR lower(p.name) = lower(:name))', { path, name });
  if (exceptId !== undefined) query.andWhere('p.id <> :exceptId', { exceptId });
  const taken = await query.getMany();
  const conflicts: Record<string, string[]> = {};
  if (taken.some((p) => p.path.toLowerCase() === path.toLowerCase()))
    conflicts.path = ['has already been taken'];
  if (taken.some((p) => p.name.toLowerCase() === name.toLowerCase()))
    conflicts.name = ['has already been taken'];
  if (Object.keys(conflicts).length) throw validationFailed(conflicts);
}

/** A concurrent write may take the path between the check and the write: the unique index decides. */
async function saveUnique<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw validationFailed({ path: ['has already been taken'] });
    }
    throw err;
  }
}

function dedupeTopics(topics: string[]): string[] {
  const seen = new Set<string>();
  return topics
    .flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter((t) => t && !seen.has(t.toLowerCase()) && seen.add(t.toLowerCase()));
}
