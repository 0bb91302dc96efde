import { type DataSource, type EntityManager, type ObjectLiteral, type SelectQueryBuilder } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import type { operations } from '../../generated/openapi.js';
import type { Config } from '../config.js';
import type { Events } from '../core/events.js';
import { MAX_ID, recordId } from '../core/ids.js';
import {
  activeSql,
  authorizeProject,
  canReadStatistics,
  canUseForking,
  canSee,
  groupAccessLevel,
  isAdmin,
  isMemberLevel,
  meetsAccessLevel,
  projectAccess,
  projectAccessOf,
  projectAccessSql,
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
  conflict,
  forbidden,
  methodNotAllowed,
  notFound,
  unauthorized,
  validationFailed,
} from '../core/errors.js';
import {
  isKeyset,
  paginateKeysetRows,
  paginateOffsetRows,
  type Page,
  type RequestInfo,
  type RowReader,
} from '../core/pagination.js';
import { Member } from '../members/member.entity.js';
import { AccessLevel } from '../core/access-level.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import { writeRepositoryState } from '../git/repository-state.js';
import { isValidBranchName } from '../git/ref-names.js';
import { openGitRepository, type DetectedLicense } from '../git/repository.js';
import { groupSettings, newRunnersToken, projectCreationMinimum } from '../groups/group-settings.js';
import type { RepositoryStorage } from '../git/storage.js';
import type { StorageRecovery } from '../git/storage-recovery.js';
import { faultPoint } from '../core/faults.js';
import {
  ProtectedBranch,
  ProtectedBranchAccessLevel,
} from '../protected_branches/protected-branch.entity.js';
import type { Contributions, CoreDeps } from '../core/family.js';
import { ProjectGroupLink } from '../members/project-group-link.entity.js';
import { User } from '../users/user.entity.js';
import { ProjectCustomAttribute } from './custom-attribute.entity.js';
import { ProjectStatistics } from './project-statistics.entity.js';
import { Project } from './project.entity.js';
import { projectSettings, settingsFromParams } from './project-settings.js';
import {
  readContributedFields,
  writeContributedAttributes,
  type ContributedAttributes,
} from './project-attributes.js';
import { readableProjectIds } from '../core/readable-projects.js';
import { containing, escapeLike } from '../core/search.js';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.js';
import { borrowAndFetch } from '../git/object-sharing.js';
import { preparedQuery } from '../db/prepared.js';
import { entityRows, type EntityRows } from '../db/rows.js';
import { ChangeCache, ownCopy, type Change } from '../db/change-cache.js';
import { utcToday } from '../core/clock.js';
import { changeFeed } from '../db/changes.js';

export type ListProjectsParams = NonNullable<operations['listProjects']['parameters']['query']>;
export type CreateProjectParams = NonNullable<
  operations['createProject']['requestBody']
>['content']['application/json'];
export type UpdateProjectParams = NonNullable<
  operations['updateProject']['requestBody']
>['content']['application/json'];
export type DeleteProjectParams = NonNullable<operations['deleteProject']['parameters']['query']>;
export type ForkProjectParams = NonNullable<
  operations['forkProject']['requestBody']
>['content']['application/json'];
export type ListForksParams = NonNullable<operations['listProjectForks']['parameters']['query']>;

/** A project as one caller sees it: what the presenter needs to decide which fields to show. */
export interface ProjectView {
  project: Project & { namespace: Namespace };
  accessLevel: number;
  /** Present when an administrator asked for them. */
  customAttributes?: ProjectCustomAttribute[];
  /** Direct and inherited levels, known when a single project was loaded. */
  projectAccess?: number;
  groupAccess?: number;
  /** The flags of the custom roles on the caller's memberships (member_roles family). */
  memberRolePermissions?: string[];
  showStatistics: boolean;
  /** Active shares of the project with groups, each with its group. */
  sharedWithGroups?: ProjectGroupLink[];
  /** For a fork: its source, when asked for and visible to the caller. */
  forkedFrom?: ProjectView;
  /** Attributes other families keep for the project (project-attributes.ts), when loaded. */
  contributed?: ContributedAttributes;
}

/** Which reads of a single project load what besides the project. */
export interface DetailOptions {
  statistics?: boolean;
  customAttributes?: boolean;
  shares?: boolean;
  /** A fork's source (`forked_from_project`), if the caller may see it. */
  forkSource?: boolean;
  /** The attributes other families keep, for the project's full representation. */
  contributed?: boolean;
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

/** What `find`'s statement says of a project for one caller, before the caller's own checks. */
interface FoundProject {
  project: ProjectView['project'];
  access: ReturnType<typeof projectAccessOf>;
  shares: ProjectGroupLink[];
}

/** Projects found, by caller, day and key; a day's entries stop counting when memberships may expire. */
const FOUND_PROJECTS = 10_000;
const FOUND_TTL_MS = 30_000;

/** A fresh copy of a found project, down to the entities a request could change. */
function copyFound({ project, access, shares }: FoundProject): FoundProject {
  const copy = ownCopy(project);
  copy.namespace = ownCopy(project.namespace);
  if (project.namespace.owner) copy.namespace.owner = ownCopy(project.namespace.owner);
  return {
    project: copy,
    access: { ...access },
    shares: shares.map((link) => {
      const share = ownCopy(link);
      if (link.group) share.group = ownCopy(link.group);
      return share;
    }),
  };
}

/** Whether a change announced by the database may alter what was found. */
function foundChangedBy(found: FoundProject, change: Change): boolean {
  const { project } = found;
  switch (change.kind) {
    case 'access':
      return true;
    case 'project':
      return change.id === project.id;
    case 'namespace':
      return change.id === project.namespace.id || found.shares.some((link) => link.groupId === change.id);
    case 'user':
      return change.id === project.namespace.ownerId;
    default:
      return false;
  }
}

export class ProjectsService {
  private readonly dataSource: DataSource;
  private readonly config: Config;
  private readonly events: Events;
  private readonly contributions: Contributions;
  private rows?: {
    project: EntityRows<Project>;
    namespace: EntityRows<Namespace>;
    owner: EntityRows<User>;
    link: EntityRows<ProjectGroupLink>;
    group: EntityRows<Namespace>;
  };
  private findStatements?: string[];
  private ownerRows?: EntityRows<User>;
  private statisticsRows?: EntityRows<ProjectStatistics>;

  /**
   * `find`'s answers by caller, day and key: dropped when the project, its namespace, its shares, its
   * owner or anyone's access to projects changes, in any process (src/db/changes.ts).
   */
  private readonly found: ChangeCache<string, FoundProject>;

  constructor(
    deps: CoreDeps,
    private readonly storage: RepositoryStorage,
    private readonly recovery: StorageRecovery,
  ) {
    this.dataSource = deps.dataSource;
    this.config = deps.config;
    this.events = deps.events;
    this.contributions = deps.contributions;
    this.found = new ChangeCache(
      changeFeed(deps.dataSource),
      FOUND_PROJECTS,
      FOUND_TTL_MS,
      ['access', 'project', 'namespace', 'user'],
      (_key, found, change) => foundChangedBy(found, change),
    );
  }

  private baseQuery(manager: EntityManager = this.dataSource.manager): SelectQueryBuilder<Project> {
    return manager
      .getRepository(Project)
      .createQueryBuilder('p')
      .innerJoinAndSelect('p.namespace', 'n')
      .leftJoinAndSelect('n.owner', 'owner');
  }

  /** The entities of `find`'s single statement, by alias. */
  private get findRows() {
    this.rows ??= {
      project: entityRows(this.dataSource, Project, 'p'),
      namespace: entityRows(this.dataSource, Namespace, 'n'),
      owner: entityRows(this.dataSource, User, 'o'),
      link: entityRows(this.dataSource, ProjectGroupLink, 'sl'),
      group: entityRows(this.dataSource, Namespace, 'sg'),
    };
    return this.rows;
  }

  /** `find`'s statement, by id or by full path ($1 the caller's id, 0 for none). */
  private findSql(byPath: boolean): string {
    this.findStatements ??= [false, true].map((path) => {
      const rows = this.findRows;
      const access = projectAccessSql('p', 'n', '$1');
      return `SELECT ${rows.project.select}, ${rows.namespace.select}, ${rows.owner.select},
          ${rows.link.select}, ${rows.group.select}, ${access.project} AS access_project,
          ${access.group} AS access_group, ${access.shared} AS access_shared,
          ${access.permissions} AS access_permissions
        FROM projects p
        JOIN namespaces n ON n.id = p.namespace_id
        LEFT JOIN users o ON o.id = n.owner_id
        LEFT JOIN project_group_links sl ON sl.project_id = p.id AND ${activeSql('sl')}
        LEFT JOIN namespaces sg ON sg.id = sl.group_id
        WHERE ${path ? 'lower(n.full_path) = lower($2) AND lower(p.path) = lower($3)' : 'p.id = $2'}
        ORDER BY sl.id`;
    });
    return this.findStatements[byPath ? 1 : 0];
  }

  /**
   * One project by integer id or full path; 404 unless the caller may see it. One statement reads the
   * project, its namespace and owner, the caller's access and the project's shares (a row per share).
   */
  async find(caller: Caller, id: string | number, options: DetailOptions = {}): Promise<ProjectView> {
    const key = String(id);
    const numeric = recordId(key);
    const userId = caller.user?.id ?? 0;
    const cacheKey = `${utcToday()} ${userId} ${numeric ?? key.toLowerCase()}`;
    let found = this.found.get(cacheKey);
    if (found) found = copyFound(found);
    else {
      const mark = this.found.mark();
      found = (await this.lookUp(userId, key, numeric)) ?? undefined;
      if (!found) throw notFound('Project');
      this.found.set(cacheKey, copyFound(found), mark);
    }
    const { project, access: level, shares } = found;
    if (project.markedForDeletionAt && !isAdmin(caller)) throw notFound('Project');
    if (!canSee(caller, { visibilityLevel: project.visibilityLevel, accessLevel: level.level }))
      throw notFound('Project');
    const view: ProjectView = {
      project,
      accessLevel: level.level,
      projectAccess: level.project,
      groupAccess: level.group,
      memberRolePermissions: level.memberRolePermissions,
      showStatistics: false,
      sharedWithGroups: shares,
    };
    return this.details(caller, view, options);
  }

  /**
   * One statement reads the project by id or full path, its namespace and owner, the caller's access
   * and the project's shares (a row per share).
   */
  private async lookUp(
    userId: number,
    key: string,
    numeric: number | undefined,
  ): Promise<FoundProject | null> {
    const values: unknown[] = [userId];
    if (numeric !== undefined) values.push(numeric);
    else {
      const slash = key.lastIndexOf('/');
      if (slash <= 0) return null;
      values.push(key.slice(0, slash), key.slice(slash + 1));
    }
    const rows = this.findRows;
    const found = await preparedQuery(this.dataSource, this.findSql(numeric === undefined), values);
    if (found.length === 0) return null;
    const [first] = found;
    const project = rows.project.hydrate(first) as ProjectView['project'];
    project.namespace = rows.namespace.hydrate(first)!;
    project.namespace.owner = rows.owner.hydrate(first);
    const access = userId
      ? projectAccessOf(
          first.access_project,
          first.access_group,
          first.access_shared,
          first.access_permissions as string[],
        )
      : projectAccessOf(0, 0, 0);
    const shares: ProjectGroupLink[] = [];
    for (const row of found) {
      const link = rows.link.hydrate(row);
      if (!link) continue;
      link.group = rows.group.hydrate(row)!;
      shares.push(link);
    }
    return { project, access, shares };
  }

  /**
   * What a single project's read shows besides the resolved project (statistics, custom attributes,
   * shares), loaded for a project already resolved for the caller. A view from `find` has its shares.
   */
  async details(caller: Caller, view: ProjectView, options: DetailOptions): Promise<ProjectView> {
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
    const sharedWithGroups =
      view.sharedWithGroups ??
      (options.shares ? ((await this.sharedWithGroups([project.id])).get(project.id) ?? []) : undefined);
    const forkedFrom =
      options.forkSource && project.forkedFromProjectId !== null
        ? (await this.forkSources(caller, [project.forkedFromProjectId])).get(project.forkedFromProjectId)
        : undefined;
    const contributed = options.contributed
      ? (await readContributedFields(this.contributions, this.dataSource.manager, [project.id])).get(
          project.id,
        )
      : undefined;
    return { ...view, customAttributes, showStatistics, sharedWithGroups, forkedFrom, contributed };
  }

  /** The sources of forks that the caller may see, by id, in one query (for `forked_from_project`). */
  async forkSources(caller: Caller, ids: number[]): Promise<Map<number, ProjectView>> {
    const sources = new Map<number, ProjectView>();
    if (ids.length === 0) return sources;
    const query = whereProjectVisible(this.baseQuery(), caller, 'p', 'n')
      .andWhere('p.id IN (:...sourceIds)', { sourceIds: [...new Set(ids)] })
      .andWhere('p.marked_for_deletion_at IS NULL');
    for (const project of await query.getMany())
      sources.set(project.id, {
        project: project as ProjectView['project'],
        accessLevel: 0,
        showStatistics: false,
      });
    return sources;
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
      memberRolePermissions: view.memberRolePermissions,
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
    const newDefaultBranch =
      params.default_branch !== undefined && params.default_branch !== project.defaultBranch
        ? await this.checkDefaultBranch(project, params.default_branch)
        : undefined;
    await this.dataSource.transaction(async (tx) => {
      await assertAvailable(tx, project.namespaceId, name, path, project.id);
      const changes: QueryDeepPartialEntity<Project> = {
        name,
        path,
        visibilityLevel,
        settings: { ...project.settings, ...settingsFromParams(params as Record<string, unknown>) },
      };
      if (params.description !== undefined) changes.description = params.description;
      if (newDefaultBranch !== undefined) changes.defaultBranch = newDefaultBranch.name;
      const topics = params.topics ?? params.tag_list;
      if (topics !== undefined) changes.topics = dedupeTopics(topics);
      await saveUnique(() => tx.getRepository(Project).update(project.id, changes));
      await writeContributedAttributes(this.contributions, tx, project.id, params as Record<string, unknown>);
    });
    if (newDefaultBranch !== undefined && newDefaultBranch.exists)
      await openGitRepository(this.storage.diskPath(project.repositoryStorage, project.id)).setHead(
        newDefaultBranch.name,
      );
    return this.find(caller, project.id, { shares: true, forkSource: true, contributed: true });
  }

  /**
   * GitLab moves HEAD to a new default branch, which must exist; an empty repository has none yet, so
   * there the name is kept for the first push if git could hold it.
   */
  private async checkDefaultBranch(project: Project, name: string) {
    const refused = new ApiError(400, {
      message: `Could not set the default branch. Do you have a branch named '${name}' in your repository?`,
    });
    if (!isValidBranchName(name)) throw refused;
    const repository = openGitRepository(this.storage.diskPath(project.repositoryStorage, project.id));
    if (await repository.branch(name)) return { name, exists: true };
    if (!(await repository.isEmpty())) throw refused;
    return { name, exists: false };
  }

  async setArchived(caller: Caller, view: ProjectView, archived: boolean): Promise<ProjectView> {
    if (view.project.archived !== archived)
      await this.dataSource.getRepository(Project).update(view.project.id, { archived });
    return this.find(caller, view.project.id, { shares: true, forkSource: true, contributed: true });
  }

  /**
   * Deletes at once, with the project's repository, members and the bot users of its access tokens;
   * shares, statistics and custom attributes go with the row. The rows go first; once that commits the
   * repository is moved out of its path, and the `project.deleted` job (enqueued with the rows) removes
   * it. A crash between the two leaves an orphan that the job or the storage recovery removes.
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
    let borrowers: Array<{ id: number; repository_storage: string }> = [];
    await this.dataSource.transaction(async (tx) => {
      // A fork's source before the fork: deleting the source updates its forks (the relation goes),
      // deleting the fork updates the source (`forks_count`), and the other order deadlocks.
      if (project.forkedFromProjectId !== null)
        await tx.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [project.forkedFromProjectId]);
      // The project's row first, as a group deletion locks it before the members: the other order
      // deadlocks. A group deletion that took it first has deleted the project already.
      const [locked] = await tx.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [project.id]);
      if (!locked) throw notFound('Project');
      // Forks that borrow this repository's objects get their own copy before it goes (in the job).
      borrowers = await tx.query(
        'SELECT id, repository_storage FROM projects WHERE borrows_objects_from_id = $1 ORDER BY id',
        [project.id],
      );
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
        repository: { storage: project.repositoryStorage },
        borrowers: borrowers.map((row) => ({ storage: row.repository_storage, projectId: Number(row.id) })),
      });
      faultPoint('project-delete:rows');
    });
    faultPoint('project-delete:committed');
    // A lender stays at its path, where its borrowers find it, until the job has made them whole.
    if (borrowers.length === 0)
      await this.storage.retireDeleted([{ storage: project.repositoryStorage, projectId: project.id }]);
    faultPoint('project-delete:retired');
  }

  /** The new project as its creator sees it, with `project.created` published in the creation's transaction. */
  private async announceCreated(
    tx: EntityManager,
    caller: Caller,
    userId: number,
    projectId: number,
  ): Promise<ProjectView> {
    const created = (await this.baseQuery(tx)
      .where('p.id = :id', { id: projectId })
      .getOneOrFail()) as ProjectView['project'];
    const access = await projectAccess(tx, caller, created);
    await this.events.publish(tx, 'project.created', {
      projectId: created.id,
      userId,
      fullPath: `${created.namespace.fullPath}/${created.path}`,
    });
    faultPoint('project-create:placed');
    return {
      project: created,
      accessLevel: access.level,
      projectAccess: access.project,
      groupAccess: access.group,
      showStatistics: false,
    };
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
    const query = whereProjectVisible(this.baseQuery(), caller, 'p', 'n', member && isMember);
    if (member) query.setParameters(member.parameters).addSelect(member.heldSql, 'readable_held');
    if (scope.forkedFrom !== undefined)
      query.andWhere('p.forked_from_project_id = :forkedFrom', { forkedFrom: scope.forkedFrom });
    if (caller.user) query.setParameter('callerId', caller.user.id);

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
    const ids = page.items.map((project) => project.id);
    const attributes = params.with_custom_attributes && admin ? await this.customAttributes(ids) : undefined;
    const shared = ids.filter((_, i) => page.rows[i].has_shares);
    const shares = withShares && shared.length > 0 ? await this.sharedWithGroups(shared) : undefined;
    const sourceIds = page.items.flatMap((project) =>
      project.forkedFromProjectId === null ? [] : [project.forkedFromProjectId],
    );
    const sources = params.simple ? undefined : await this.forkSources(caller, sourceIds);
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
    const rows = this.findRows;
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

  async create(caller: Caller, params: CreateProjectParams): Promise<ProjectView> {
    const user = caller.user;
    if (!user) throw unauthorized();
    if (!params.name && !params.path) {
      throw badParameter('name, path are missing, at least one parameter must be provided');
    }
    const name = params.name || params.path!;
    const path = params.path || pathFromName(params.name!);
    checkNameAndPath(name, path);
    // A blank default branch is the instance's default, as in GitLab; git must be able to hold the name.
    const defaultBranch = params.default_branch || 'main';
    if (!isValidBranchName(defaultBranch)) throw validationFailed({ default_branch: ['is invalid'] });

    // The row is inserted first and commits last: the repository is placed, whole, in between (see
    // RepositoryStorage.create), so a committed row always has its repository.
    let placed: { storage: string; projectId: number } | undefined;
    try {
      const view = await this.dataSource.transaction(async (tx) => {
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
              defaultBranch,
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
        const branch = project.defaultBranch!;
        await protectDefaultBranch(tx, project.id, branch);
        const readme = params.initialize_with_readme
          ? `# ${name}\n${params.description ? `\n${params.description}\n` : ''}`
          : undefined;
        const dir = await this.storage.create(
          tx,
          project.repositoryStorage,
          project.id,
          branch,
          readme === undefined
            ? undefined
            : (building) =>
                this.storage.initializeWithReadme(building, branch, readme, user).then(() => undefined),
        );
        placed = { storage: project.repositoryStorage, projectId: project.id };
        if (readme !== undefined)
          await writeRepositoryState(tx, project.id, await openGitRepository(dir).state(branch));
        return this.announceCreated(tx, caller, user.id, project.id);
      });
      return view;
    } catch (err) {
      // Removed only if the row did not commit after all; without the database, the next sweep decides.
      if (placed) await this.recovery.finishRemoval(placed.storage, placed.projectId).catch(() => undefined);
      throw err;
    }
  }

  /**
   * A fork of `source` (see the contract's `forkProject`): a new project whose repository borrows the
   * fork network's objects and holds the source's branches and tags. Created as `create` creates: the
   * row first, the repository built under `.creating-*` and placed, the row committed last. The
   * source's row is locked throughout, so it cannot be deleted before its new borrower is recorded.
   */
  async fork(caller: Caller, source: ProjectView, params: ForkProjectParams): Promise<ProjectView> {
    const user = caller.user;
    if (!user) throw unauthorized();
    const sourceSettings = projectSettings(source.project.settings);
    if (!canUseForking(caller, sourceSettings.forking_access_level, source.accessLevel)) throw notFound();
    const name = params.name ?? source.project.name;
    const path = params.path ?? source.project.path;
    const sourceDir = this.storage.diskPath(source.project.repositoryStorage, source.project.id);
    const branch = params.branches;
    if (branch !== undefined) {
      const found = isValidBranchName(branch) && (await openGitRepository(sourceDir).branch(branch));
      if (!found) throw notFound('Source Branch');
    }
    const sourceDefault = source.project.defaultBranch ?? 'main';
    const defaultBranch = branch === undefined || branch === sourceDefault ? sourceDefault : branch;
    const refspecs =
      branch === undefined
        ? ['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*']
        : [`+refs/heads/${branch}:refs/heads/${branch}`];
    asConflict(() => checkNameAndPath(name, path));

    let placed: { storage: string; projectId: number } | undefined;
    try {
      return await this.dataSource.transaction(async (tx) => {
        const [locked] = (await tx.query(
          `SELECT id, borrows_objects_from_id, repository_storage FROM projects WHERE id = $1
           FOR NO KEY UPDATE`,
          [source.project.id],
        )) as Array<{ id: number; borrows_objects_from_id: number | null; repository_storage: string }>;
        if (!locked) throw notFound('Project');
        const namespace = await this.forkTarget(tx, caller, params);
        const visibilityLevel = Math.min(
          source.project.visibilityLevel,
          namespace.visibilityLevel,
          params.visibility === undefined ? Visibility.public : Visibility[params.visibility],
        );
        await asConflictAsync(() => assertAvailable(tx, namespace.id, name, path));
        // Every fork of a network borrows from its root, so no chain of alternates grows.
        const lenderId = locked.borrows_objects_from_id ?? source.project.id;
        const storage = locked.repository_storage;
        const projects = tx.getRepository(Project);
        const project = await asConflictAsync(() =>
          saveUnique(() =>
            projects.save(
              projects.create({
                namespaceId: namespace.id,
                name,
                path,
                description: params.description ?? source.project.description,
                defaultBranch,
                visibilityLevel,
                creatorId: user.id,
                topics: source.project.topics,
                settings: {
                  ...source.project.settings,
                  mr_default_target_self: params.mr_default_target_self ?? false,
                },
                repositoryStorage: storage,
                runnersToken: newRunnersToken(),
                forkedFromProjectId: source.project.id,
                borrowsObjectsFromId: lenderId,
                importStatus: 'finished',
              }),
            ),
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
        await protectDefaultBranch(tx, project.id, defaultBranch);
        const lenderDir = this.storage.diskPath(storage, lenderId);
        const dir = await this.storage.create(tx, storage, project.id, defaultBranch, (building) =>
          borrowAndFetch(building, lenderDir, sourceDir, refspecs),
        );
        placed = { storage, projectId: project.id };
        await writeRepositoryState(tx, project.id, await openGitRepository(dir).state(defaultBranch));
        return {
          ...(await this.announceCreated(tx, caller, user.id, project.id)),
          forkedFrom: {
            ...source,
            project: { ...source.project, forksCount: source.project.forksCount + 1 },
          },
        };
      });
    } catch (err) {
      if (placed) await this.recovery.finishRemoval(placed.storage, placed.projectId).catch(() => undefined);
      // The source went between the lock-free checks and the insert.
      if (isForeignKeyViolation(err)) throw notFound('Project');
      throw err;
    }
  }

  /**
   * Where a fork goes (GitLab's `valid_fork_target?`): a namespace the caller may create projects in,
   * else 404 `Target Namespace`.
   */
  private async forkTarget(tx: EntityManager, caller: Caller, params: ForkProjectParams): Promise<Namespace> {
    const user = caller.user!;
    const namespaces = tx.getRepository(Namespace);
    const byKey = (key: string) => {
      const id = recordId(key);
      return id !== undefined
        ? namespaces.findOneBy({ id })
        : namespaces
            .createQueryBuilder('n')
            .where('lower(n.full_path) = lower(:path)', { path: key })
            .getOne();
    };
    const namespace =
      params.namespace_id !== undefined
        ? // An id beyond the column's range names no namespace (and would not reach the database).
          Math.abs(params.namespace_id) <= MAX_ID
          ? await namespaces.findOneBy({ id: params.namespace_id })
          : null
        : params.namespace_path !== undefined
          ? await namespaces
              .createQueryBuilder('n')
              .where('lower(n.full_path) = lower(:path)', { path: params.namespace_path })
              .getOne()
          : params.namespace !== undefined
            ? await byKey(params.namespace)
            : await namespaces.findOneBy({ ownerId: user.id, kind: 'user' });
    const refused = () => notFound('Target Namespace');
    if (!namespace) throw refused();
    if (user.admin) return namespace;
    if (namespace.kind === 'user') {
      if (namespace.ownerId !== user.id || user.external || user.projectsLimit === 0) throw refused();
      const owned = await tx.getRepository(Project).count({ where: { namespaceId: namespace.id } });
      if (owned >= user.projectsLimit) throw refused();
      return namespace;
    }
    const level = await groupAccessLevel(tx, caller, namespace);
    const minimum = projectCreationMinimum(groupSettings(namespace.settings).project_creation_level);
    if (minimum === null || !isMemberLevel(level) || !meetsAccessLevel(level, minimum)) throw refused();
    return namespace;
  }

  /**
   * Removes a fork's relation (`DELETE /projects/:id/fork`); false when the project is no fork. The
   * repository stops borrowing objects in a job, as GitLab's unlinking leaves the object pool.
   */
  async unlinkFork(view: ProjectView): Promise<boolean> {
    const project = view.project;
    return this.dataSource.transaction(async (tx) => {
      const [row] = (await tx.query(
        'SELECT forked_from_project_id, borrows_objects_from_id FROM projects WHERE id = $1 FOR UPDATE',
        [project.id],
      )) as Array<{ forked_from_project_id: number | null; borrows_objects_from_id: number | null }>;
      if (!row || row.forked_from_project_id === null) return false;
      await tx.getRepository(Project).update(project.id, { forkedFromProjectId: null });
      if (row.borrows_objects_from_id !== null)
        await this.events.publish(tx, 'project.fork_unlinked', {
          projectId: project.id,
          storage: project.repositoryStorage,
          lenderId: row.borrows_objects_from_id,
        });
      return true;
    });
  }

  /**
   * Records that a project is a fork of another (`POST /projects/:id/fork/:forked_from_id`, for
   * administrators): the relation only, no repository changes.
   */
  async linkFork(caller: Caller, id: string | number, sourceId: string | number): Promise<ProjectView> {
    const view = await this.find(caller, id);
    const source = await this.find(caller, sourceId).catch((err: unknown) => {
      throw err instanceof ApiError && err.status === 404 ? notFound('Source Project') : err;
    });
    if (view.project.id === source.project.id) throw conflict('Project already forked');
    await this.dataSource.transaction(async (tx) => {
      const [row] = (await tx.query('SELECT forked_from_project_id FROM projects WHERE id = $1 FOR UPDATE', [
        view.project.id,
      ])) as Array<{ forked_from_project_id: number | null }>;
      if (!row) throw notFound('Project');
      if (row.forked_from_project_id !== null) throw conflict('Project already forked');
      await tx.getRepository(Project).update(view.project.id, { forkedFromProjectId: source.project.id });
    });
    return this.find(caller, view.project.id, { shares: true, forkSource: true, contributed: true });
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

/** GitLab answers a fork's record errors with 409 (`conflict!`), where creation answers 400. */
function asConflict<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    throw toConflict(err);
  }
}

async function asConflictAsync<T>(check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    throw toConflict(err);
  }
}

const toConflict = (err: unknown) =>
  err instanceof ApiError && err.status === 400 && typeof err.body === 'object' && 'message' in err.body
    ? new ApiError(409, err.body)
    : err;

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
