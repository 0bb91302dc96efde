/** Forking a project, and linking or unlinking a fork's relation. */
import { type DataSource, type EntityManager } from 'typeorm';
import type { Events } from '../core/events.js';
import { MAX_ID, recordId } from '../core/ids.js';
import {
  canUseForking,
  groupAccessLevel,
  isMemberLevel,
  meetsAccessLevel,
  Visibility,
} from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, conflict, notFound, unauthorized } from '../core/errors.js';
import { Member } from '../members/member.entity.js';
import { AccessLevel } from '../core/access-level.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import { writeRepositoryState } from '../repository/repository-state-record.js';
import { isValidBranchName } from '../git/ref-names.js';
import { openGitRepository } from '../git/repository.js';
import { groupSettings, newRunnersToken, projectCreationMinimum } from '../groups/group-settings.js';
import type { RepositoryStorage } from '../git/storage.js';
import type { StorageRecovery } from '../git/storage-recovery.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { ProjectStatistics } from './project-statistics.entity.js';
import { Project } from './project.entity.js';
import { projectSettings } from './project-settings.js';
import { isForeignKeyViolation } from '../db/errors.js';
import { borrowAndFetch } from '../git/object-sharing.js';
import type { ForkProjectParams, ProjectView } from './projects.service.js';
import {
  asConflict,
  asConflictAsync,
  assertAvailable,
  checkNameAndPath,
  protectDefaultBranch,
  saveUnique,
} from './project-validation.js';

export class ProjectForksService {
  private readonly dataSource: DataSource;
  private readonly events: Events;

  constructor(
    deps: CoreDeps,
    private readonly storage: RepositoryStorage,
    private readonly recovery: StorageRecovery,
    private readonly services: Pick<ServiceRegistry, 'projects'>,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
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
        const project = await this.insertFork(tx, caller, source, params, {
          namespace,
          name,
          path,
          defaultBranch,
          visibilityLevel,
          storage,
          lenderId,
        });
        const lenderDir = this.storage.diskPath(storage, lenderId);
        const dir = await this.storage.create(tx, storage, project.id, defaultBranch, (building) =>
          borrowAndFetch(building, lenderDir, sourceDir, refspecs),
        );
        placed = { storage, projectId: project.id };
        await writeRepositoryState(tx, project.id, await openGitRepository(dir).state(defaultBranch));
        return {
          ...(await this.services.projects.announceCreated(tx, caller, user.id, project.id)),
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

  /** The fork's rows: the project, its statistics, its owner's membership and its protected default branch. */
  private async insertFork(
    tx: EntityManager,
    caller: Caller,
    source: ProjectView,
    params: ForkProjectParams,
    fork: {
      namespace: Namespace;
      name: string;
      path: string;
      defaultBranch: string;
      visibilityLevel: number;
      storage: string;
      lenderId: number;
    },
  ): Promise<Project> {
    const user = caller.user!;
    const { namespace, name, path, defaultBranch, visibilityLevel, storage, lenderId } = fork;
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
    return project;
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
    const view = await this.services.projects.find(caller, id);
    const source = await this.services.projects.find(caller, sourceId).catch((err: unknown) => {
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
    return this.services.projects.find(caller, view.project.id, {
      shares: true,
      forkSource: true,
      contributed: true,
    });
  }
}
