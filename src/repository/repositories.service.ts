import fs from 'node:fs';
import type { DataSource } from 'typeorm';
import type { Caller } from '../core/auth.js';
import type { Events } from '../core/events.js';
import type { Contributions, CoreDeps } from '../core/family.js';
import { notFound } from '../core/errors.js';
import { KeyedLock } from '../core/keyed-lock.js';
import { housekeep, type HousekeepingReport, type HousekeepingTask } from '../git/housekeeping.js';
import { dissociate } from '../git/object-sharing.js';
import { preReceiveRefusal, type ReceivedPush } from '../git/pre-receive.js';
import { ZERO_SHA, type RefChange } from '../git/ref-changes.js';
import { openGitRepository, type GitRepository } from '../git/repository.js';
import type { RepositoryStorage } from '../git/storage.js';
import { READ_ONLY_MESSAGE, type RepositoryWriteGate } from '../repository_storage_moves/write-gate.js';
import type { ProjectView } from '../projects/projects.service.js';
import { PushEvent } from './push-event.entity.js';
import './repositories.events.js';
import { writeRepositoryState } from './repository-state-record.js';

/** A project's repository as one caller may use it. */
export interface OpenRepository {
  view: ProjectView;
  /** Every git read and write of the request goes through it. */
  git: GitRepository;
}

/** A ref update refused by a pre-receive check, or lost to a concurrent update; `reason` says which. */
export class RefUpdateRefused extends Error {
  constructor(
    readonly reason: string,
    readonly conflict = false,
  ) {
    super(reason);
  }
}

/**
 * The way every family reaches a project's repository: the resolved project's checkout, and ref updates that
 * pass the same pre-receive checks as `git push` and are recorded as push events.
 */
export class RepositoriesService {
  private readonly refLocks = new KeyedLock();
  private readonly dataSource: DataSource;
  private readonly events: Events;
  private readonly contributions: Contributions;

  constructor(
    deps: CoreDeps,
    private readonly storage: RepositoryStorage,
    private readonly gate: RepositoryWriteGate,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
    this.contributions = deps.contributions;
  }

  /** Why the families' pre-receive checks refuse the changes (GitLab's message), or null. */
  pushRefusal(push: ReceivedPush, changes: RefChange[]): Promise<string | null> {
    return preReceiveRefusal(this.contributions.of('preReceiveChecks'), push, changes);
  }

  /** The database, for checks outside a transaction (the write gate's). */
  get manager() {
    return this.dataSource.manager;
  }

  dir(view: ProjectView): string {
    return this.storage.diskPath(view.project.repositoryStorage, view.project.id);
  }

  /** A project's repository for work on the queue, where no caller resolved the project. */
  gitOf(project: { id: number; repositoryStorage: string }): GitRepository {
    return openGitRepository(this.storage.diskPath(project.repositoryStorage, project.id));
  }

  /** The repository of a project the pipeline (or the caller) already resolved and authorized. */
  open(view: ProjectView): OpenRepository {
    return { view, git: openGitRepository(this.dir(view)) };
  }

  /**
   * Housekeeping of a project's repository, one run at a time per repository in this process; a
   * project gone meanwhile has nothing to keep.
   */
  async housekeep(projectId: number, task: HousekeepingTask): Promise<HousekeepingReport | null> {
    const [row] = (await this.dataSource.query(
      `SELECT repository_storage,
         EXISTS (SELECT 1 FROM projects b WHERE b.borrows_objects_from_id = p.id) AS lending
       FROM projects p WHERE id = $1`,
      [projectId],
    )) as Array<{ repository_storage: string; lending: boolean }>;
    if (!row) return null;
    const dir = this.storage.diskPath(row.repository_storage, projectId);
    // A repository being removed or moved has nothing to keep here.
    if (!fs.existsSync(dir)) return null;
    const sharing = { lending: row.lending };
    try {
      return await this.refLocks.run(`${dir}\0housekeeping`, () => housekeep(dir, task, sharing));
    } catch (err) {
      // Removed or moved while the work ran: the same as finding it gone.
      if (!fs.existsSync(dir)) return null;
      throw err;
    }
  }

  /**
   * Gives a fork's repository its own copy of the objects it borrows (before its lender goes, or once
   * it leaves the fork network), then records that it borrows no more. One at a time per repository
   * in this process, as housekeeping runs, since both repack; a repository gone has nothing to do.
   */
  async dissociate(storage: string, projectId: number, lenderId: number): Promise<void> {
    const dir = this.storage.diskPath(storage, projectId);
    if (!fs.existsSync(dir)) return;
    try {
      await this.refLocks.run(`${dir}\0housekeeping`, () => dissociate(dir));
    } catch (err) {
      if (!fs.existsSync(dir)) return;
      throw err;
    }
    await this.dataSource.query(
      'UPDATE projects SET borrows_objects_from_id = NULL WHERE id = $1 AND borrows_objects_from_id = $2',
      [projectId, lenderId],
    );
  }

  /** Schedules housekeeping on the queue, as GitLab's API does. */
  async requestHousekeeping(view: ProjectView, task: 'eager' | 'prune' | undefined): Promise<void> {
    await this.dataSource.transaction((tx) =>
      this.events.publish(tx, 'repository.housekeeping_requested', {
        projectId: view.project.id,
        task: task ?? null,
      }),
    );
  }

  /** Runs `task` as this process's only writer of `ref` in the repository, so API writes queue, not race. */
  serializeRef<T>(repository: OpenRepository, ref: string, task: () => Promise<T>): Promise<T> {
    return this.refLocks.run(`${this.dir(repository.view)}\0${ref}`, task);
  }

  /**
   * Applies ref changes atomically (all or none, each checked against its expected old value) after the
   * pre-receive checks accept every one, then records them. Throws RefUpdateRefused with GitLab's reason;
   * every API write of every family passes here, so a repository being moved refuses them all at once.
   */
  async updateRefs(
    caller: Caller,
    repository: OpenRepository,
    changes: RefChange[],
    options: { merging?: boolean } = {},
  ): Promise<void> {
    const refusal = () => new RefUpdateRefused(READ_ONLY_MESSAGE);
    await this.gate.write(this.dataSource.manager, 'project', repository.view.project.id, refusal, () =>
      this.applyRefChanges(caller, repository, changes, options),
    );
  }

  private async applyRefChanges(
    caller: Caller,
    repository: OpenRepository,
    changes: RefChange[],
    options: { merging?: boolean },
  ): Promise<void> {
    const { view, git } = repository;
    for (const change of changes) {
      if (change.forced === undefined && change.oldSha !== ZERO_SHA && change.newSha !== ZERO_SHA)
        change.forced = !(await git.isAncestor(change.oldSha, change.newSha));
    }
    // Writes through the API are what GitLab calls web updates: they may delete protected refs.
    const reason = await this.pushRefusal(
      {
        project: view.project,
        caller,
        accessLevel: view.accessLevel,
        throughApi: true,
        merging: options.merging,
        pathsOf: async (change) =>
          (await git.diffs(change.oldSha, change.newSha)).diffs.flatMap((diff) => [
            diff.oldPath,
            diff.newPath,
          ]),
        content: { dir: this.dir(view) },
      },
      changes,
    );
    if (reason) throw new RefUpdateRefused(reason);
    if (!(await git.applyRefUpdates(changes)))
      throw new RefUpdateRefused('The ref was changed by someone else meanwhile.', true);
    await this.recordPush(view.project, caller.user?.id ?? null, changes, 'api');
  }

  /**
   * The first branch pushed into an empty repository becomes the default branch when the configured one
   * was not pushed, as GitLab does; HEAD follows. Whether the repository was empty is read from git
   * (every ref there now was created by this push), not from the project row, which can be stale: a
   * request that wrote the first commit and then a branch saw `repository_empty` from before both.
   * Returns the default branch after the push.
   */
  private async adoptFirstBranch(
    project: { defaultBranch: string | null },
    repository: GitRepository,
    changes: RefChange[],
  ): Promise<string | null> {
    const created = changes.filter((c) => c.oldSha === ZERO_SHA && c.newSha !== ZERO_SHA);
    if (created.length !== changes.length) return project.defaultBranch;
    const branches = created
      .filter((c) => c.ref.startsWith('refs/heads/'))
      .map((c) => c.ref.slice('refs/heads/'.length));
    if (branches.length === 0 || (project.defaultBranch && branches.includes(project.defaultBranch)))
      return project.defaultBranch;
    const pushed = new Set(created.map((c) => c.ref));
    if (!(await repository.refs()).every((entry) => pushed.has(entry.ref))) return project.defaultBranch;
    await repository.setHead(branches[0]);
    return branches[0];
  }

  /**
   * Records moved refs durably, marks the project active, refreshes what lists show of the
   * repository, and publishes `refs.updated` in the same transaction. Git is read before the transaction,
   * which holds only the database writes; a reading made stale by a concurrent push is read and stored
   * again after it (see `storeState`).
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
    pushOptions: string[] = [],
  ): Promise<void> {
    if (changes.length === 0) return;
    const repository = openGitRepository(this.storage.diskPath(project.repositoryStorage, project.id));
    const defaultBranch = await this.adoptFirstBranch(project, repository, changes);
    const state = await repository.state(defaultBranch);
    await this.dataSource.transaction(async (tx) => {
      // A project deleted meanwhile has nothing to record; its delete waits for this record otherwise.
      const [row] = await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR KEY SHARE', [project.id]);
      if (!row) throw notFound('Project');
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
      await writeRepositoryState(tx, project.id, state);
      await this.events.publish(tx, 'refs.updated', {
        projectId: project.id,
        userId,
        changes: changes.map((c) => ({ ref: c.ref, before: c.oldSha, after: c.newSha })),
        via,
        ...(pushOptions.length > 0 ? { pushOptions } : {}),
      });
    });
    await this.storeState(project.id, defaultBranch, repository, state.refs);
    // The caller's row stays current for the rest of its request (it may push again).
    project.defaultBranch = defaultBranch;
    project.repositoryEmpty = state.empty;
  }

  /**
   * Concurrent pushes may store their readings in any order. Each pusher checks after storing that the
   * refs are still those it read; if not, it reads and stores again. The last store of all is then made
   * after the last ref change, so it holds the current state.
   */
  private async storeState(
    projectId: number,
    defaultBranch: string | null,
    repository: GitRepository,
    storedRefs: string,
  ): Promise<void> {
    let stored = storedRefs;
    for (let attempt = 0; attempt < 5 && (await repository.refsDigest()) !== stored; attempt++) {
      const state = await repository.state(defaultBranch);
      await writeRepositoryState(this.dataSource.manager, projectId, state);
      stored = state.refs;
    }
  }
}
