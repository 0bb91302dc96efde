import type { DataSource } from 'typeorm';
import { canProject, type ProjectAbility } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import type { Events } from '../core/events.js';
import { forbidden } from '../core/errors.js';
import type { ProjectsService, ProjectView } from '../projects/projects.service.js';
import type { ServiceDeps } from '../services.js';
import { git, GitError } from './git.js';
import { PushEvent } from './push-event.entity.js';
import { refreshRepositoryState } from './repository-state.js';
import { PushRules, ZERO_SHA, type RefChange } from './push-rules.js';
import './repositories.events.js';
import type { RepositoryStorage } from './storage.js';

/** A project's repository as one caller may use it. */
export interface OpenRepository {
  view: ProjectView;
  /** The bare repository on disk. */
  dir: string;
}

/** A ref update refused by the push rules, or lost to a concurrent update; `reason` says which. */
export class RefUpdateRefused extends Error {
  constructor(
    readonly reason: string,
    readonly conflict = false,
  ) {
    super(reason);
  }
}

/**
 * The way every family reaches a project's repository: lookup with abilities, and ref updates that
 * pass the same push rules as `git push` and are recorded as push events.
 */
export class RepositoriesService {
  readonly rules: PushRules;
  private readonly dataSource: DataSource;
  private readonly events: Events;

  constructor(
    deps: ServiceDeps,
    private readonly projects: ProjectsService,
    private readonly storage: RepositoryStorage,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
    this.rules = new PushRules(deps.dataSource);
  }

  dir(view: ProjectView): string {
    return this.storage.diskPath(view.project.repositoryStorage, view.project.id);
  }

  /** The project's repository: 404 when the caller cannot see the project, 403 without `ability`. */
  async open(
    caller: Caller,
    projectId: string | number,
    ability: ProjectAbility = 'read_code',
  ): Promise<OpenRepository> {
    const view = await this.projects.find(caller, projectId);
    const subject = this.projects.subject(view);
    if (!canProject(caller, ability, subject)) throw forbidden();
    return { view, dir: this.dir(view) };
  }

  /**
   * Applies ref changes atomically (all or none, each checked against its expected old value) after the
   * push rules accept every one, then records them. Throws RefUpdateRefused with GitLab's reason.
   */
  async updateRefs(caller: Caller, repository: OpenRepository, changes: RefChange[]): Promise<void> {
    const { view, dir } = repository;
    const actor = await this.rules.actor(caller, view.accessLevel);
    for (const change of changes) {
      if (change.forced === undefined && change.oldSha !== ZERO_SHA && change.newSha !== ZERO_SHA) {
        const ancestry = await git(['merge-base', '--is-ancestor', change.oldSha, change.newSha], {
          gitDir: dir,
          okCodes: [1],
        });
        change.forced = ancestry.code === 1;
      }
    }
    // Writes through the API are what GitLab calls web updates: they may delete protected refs.
    const reason = await this.rules.firstRefusal(view.project, actor, changes, { throughApi: true });
    if (reason) throw new RefUpdateRefused(reason);
    const script = changes
      .map((c) =>
        c.newSha === ZERO_SHA ? `delete ${c.ref} ${c.oldSha}` : `update ${c.ref} ${c.newSha} ${c.oldSha}`,
      )
      .join('\n');
    try {
      await git(['update-ref', '--stdin'], { gitDir: dir, input: `start\n${script}\nprepare\ncommit\n` });
    } catch (err) {
      if (err instanceof GitError)
        throw new RefUpdateRefused('The ref was changed by someone else meanwhile.', true);
      throw err;
    }
    await this.recordPush(view.project, caller.user?.id ?? null, changes, 'api');
  }

  /**
   * The first branch pushed into an empty repository becomes the default branch when the configured one
   * was not pushed, as GitLab does; HEAD follows. Returns the default branch after the push.
   */
  private async adoptFirstBranch(
    project: { defaultBranch: string | null; repositoryEmpty?: boolean },
    dir: string,
    changes: RefChange[],
  ): Promise<string | null> {
    if (!project.repositoryEmpty) return project.defaultBranch;
    const branches = changes
      .filter((c) => c.ref.startsWith('refs/heads/') && c.newSha !== ZERO_SHA)
      .map((c) => c.ref.slice('refs/heads/'.length));
    if (branches.length === 0 || (project.defaultBranch && branches.includes(project.defaultBranch)))
      return project.defaultBranch;
    await git(['symbolic-ref', 'HEAD', `refs/heads/${branches[0]}`], { gitDir: dir });
    return branches[0];
  }

  /**
   * Records moved refs durably, marks the project active, refreshes what lists show of the repository,
   * and publishes `refs.updated` in the same transaction.
   */
  async recordPush(
    project: {
      id: number;
      defaultBranch: string | null;
      repositoryStorage: string;
      repositoryEmpty?: boolean;
    },
    userId: number | null,
    changes: RefChange[],
    via: 'git' | 'api',
  ): Promise<void> {
    if (changes.length === 0) return;
    const dir = this.storage.diskPath(project.repositoryStorage, project.id);
    const defaultBranch = await this.adoptFirstBranch(project, dir, changes);
    await this.dataSource.transaction(async (tx) => {
      if (defaultBranch !== project.defaultBranch) {
        await tx.query('UPDATE projects SET default_branch = $2 WHERE id = $1', [project.id, defaultBranch]);
        // The default branch's protection follows it to the branch that became the default.
        await tx.query(
          `UPDATE protected_branches SET name = $3 WHERE project_id = $1 AND name = $2
             AND NOT EXISTS (SELECT 1 FROM protected_branches WHERE project_id = $1 AND name = $3)`,
          [project.id, project.defaultBranch, defaultBranch],
        );
      }
      await tx.getRepository(PushEvent).insert(
        changes.map((change) => ({
          projectId: project.id,
          userId,
          ref: change.ref,
          beforeSha: change.oldSha,
          afterSha: change.newSha,
          via,
        })),
      );
      await tx.query('UPDATE projects SET last_activity_at = now() WHERE id = $1', [project.id]);
      await refreshRepositoryState(tx, { id: project.id, defaultBranch }, dir);
      await this.events.publish(tx, 'refs.updated', {
        projectId: project.id,
        userId,
        changes: changes.map((c) => ({ ref: c.ref, before: c.oldSha, after: c.newSha })),
        via,
      });
    });
  }
}
