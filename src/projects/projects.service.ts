import { type DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import type { operations } from '../../generated/openapi.js';
import type { Config } from '../config.js';
import type { Events } from '../core/events.js';
import { recordId } from '../core/ids.js';
import {
  activeSql,
  authorizeProject,
  canSee,
  groupAccessLevel,
  isAdmin,
  isMemberLevel,
  meetsAccessLevel,
  projectAccess,
  projectAccessOf,
  projectAccessSql,
  type Subject,
  Visibility,
  visibilityName,
  whereProjectVisible,
} from '../core/abilities.js';
import { canReadStatistics } from './abilities.js';
import type { Caller } from '../core/auth.js';
import {
  ApiError,
  badParameter,
  forbidden,
  notFound,
  unauthorized,
  validationFailed,
} from '../core/errors.js';
import { Member } from '../members/member.entity.js';
import { AccessLevel } from '../core/access-level.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import { writeRepositoryState } from '../repository/repository-state-record.js';
import { isValidBranchName } from '../git/ref-names.js';
import { openGitRepository, type DetectedLicense } from '../git/repository.js';
import { groupSettings, newRunnersToken, projectCreationMinimum } from '../groups/group-settings.js';
import type { RepositoryStorage } from '../git/storage.js';
import type { StorageRecovery } from '../git/storage-recovery.js';
import { faultPoint } from '../core/faults.js';
import type { Contributions, CoreDeps } from '../core/family.js';
import {
  assertAvailable,
  checkNameAndPath,
  dedupeTopics,
  pathFromName,
  protectDefaultBranch,
  saveUnique,
} from './project-validation.js';
import { ProjectGroupLink } from '../members/project-group-link.entity.js';
import { User } from '../users/user.entity.js';
import { ProjectCustomAttribute } from './custom-attribute.entity.js';
import { ProjectStatistics } from './project-statistics.entity.js';
import { Project } from './project.entity.js';
import { settingsFromParams } from './project-settings.js';
import {
  readContributedFields,
  writeContributedAttributes,
  type ContributedAttributes,
} from './project-attributes.js';
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

  baseQuery(manager: EntityManager = this.dataSource.manager): SelectQueryBuilder<Project> {
    return manager
      .getRepository(Project)
      .createQueryBuilder('p')
      .innerJoinAndSelect('p.namespace', 'n')
      .leftJoinAndSelect('n.owner', 'owner');
  }

  /** The entities of `find`'s single statement, by alias. */
  get findRows() {
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
  async announceCreated(
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

export { orderBySimilarity, whereProjectMatches } from './project-search.js';
export { pathFromName } from './project-validation.js';
