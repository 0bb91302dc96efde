import { In, type DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import {
  isAdmin,
  isMemberLevel,
  projectMembershipSql,
  Visibility,
  type VisibilityName,
} from '../core/abilities.js';
import { canAdminSnippet, canReadSnippet, canReadUserAgentDetail } from './abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, badParameter, forbidden, notFound } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { offsetHeaders, perPageOf, type RequestInfo } from '../core/pagination.js';
import { CommitBuildError, type FileAction } from '../git/commit-builder.js';
import type { RefChange } from '../git/ref-changes.js';
import { SNIPPET_BRANCH, type SnippetRepositories } from './snippet-repositories.js';
import { READ_ONLY_MESSAGE } from '../repository_storage_moves/write-gate.js';
import { projectSettings } from '../projects/project-settings.js';
import type { ProjectView } from '../projects/projects.service.js';
import { User } from '../users/user.entity.js';
import { Snippet } from './snippet.entity.js';
import './snippets.events.js';

type PageParams = { page?: number; per_page?: number };
type ListParams = PageParams & { created_after?: string; created_before?: string };

export interface SnippetCreateInput {
  title: string;
  description?: string;
  visibility?: VisibilityName;
  files?: Array<{ file_path: string; content: string }>;
  content?: string;
  file_name?: string;
}

export interface SnippetUpdateInput {
  title?: string;
  description?: string;
  visibility?: VisibilityName;
  files?: Array<{
    action: FileAction['action'];
    file_path?: string;
    previous_path?: string;
    content?: string;
  }>;
  content?: string;
  file_name?: string;
}

/** Snippets with what their presentation needs: authors and the full paths of their projects. */
export interface SnippetRecords {
  items: Snippet[];
  authors: Map<number, User>;
  projectPaths: Map<number, string>;
}

/** A snippet as one caller reaches it: with its project (if any) and the caller's level there. */
interface Reached {
  snippet: Snippet;
  view: ProjectView | null;
}

/** What smart HTTP needs to serve a snippet's repository to one caller. */
export interface SnippetGitTarget {
  dir: string;
  /** GitLab's refusal of a pushed ref change, or null. */
  refusal(changes: RefChange[]): string | null;
  /** After a push: the snippet's files, size and time are read again. */
  recorded(): Promise<void>;
}

const MULTIPLE_FILES = 'To update Snippets with multiple files, you must use the `files` parameter';
const DEFAULT_STORAGE = 'default';
const HEAD = `refs/heads/${SNIPPET_BRANCH}`;
const ZERO = /^0+$/;

const snippetNotFound = () => notFound('Snippet');
const readOnly = () => new ApiError(400, { message: READ_ONLY_MESSAGE });
const repositoryError = (verb: 'creating' | 'updating', err: CommitBuildError) =>
  new ApiError(400, { message: { error: `Error ${verb} the snippet - ${err.message}` } });

export class SnippetsService {
  private readonly dataSource: DataSource;
  private readonly events: Events;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'projects' | 'snippetRepositories' | 'writeGate'>,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
  }

  private get git(): SnippetRepositories {
    return this.services.snippetRepositories;
  }

  // ---- lists ----

  async listProject(caller: Caller, view: ProjectView, params: PageParams, request: RequestInfo) {
    this.assertFeature(view);
    const query = this.query().where('s.project_id = :projectId', { projectId: view.project.id });
    // Members and administrators read every snippet of the project; others by visibility or authorship.
    if (!isAdmin(caller) && !isMemberLevel(view.accessLevel)) this.byVisibility(query, caller);
    return this.page(query, params, request);
  }

  async listPersonal(
    caller: Caller,
    scope: 'own' | 'public' | 'all',
    params: ListParams,
    request: RequestInfo,
  ) {
    const query = this.query()
      .leftJoin('projects', 'p', 'p.id = s.project_id')
      .leftJoin('namespaces', 'n', 'n.id = p.namespace_id');
    if (scope === 'public')
      query.where('s.project_id IS NULL AND s.visibility_level = :publicLevel', {
        publicLevel: Visibility.public,
      });
    else {
      if (scope === 'own') query.where('s.author_id = :authorId', { authorId: caller.user?.id ?? 0 });
      if (!isAdmin(caller)) this.readable(query, caller);
    }
    if (params.created_after)
      query.andWhere('s.created_at >= :after', { after: new Date(params.created_after) });
    if (params.created_before)
      query.andWhere('s.created_at <= :before', { before: new Date(params.created_before) });
    return this.page(query, params, request);
  }

  // ---- one snippet ----

  async getProject(caller: Caller, view: ProjectView, id: number): Promise<SnippetRecords> {
    return this.records([(await this.reachProject(caller, view, id)).snippet]);
  }

  async get(caller: Caller, id: number): Promise<SnippetRecords> {
    return this.records([(await this.reach(caller, id)).snippet]);
  }

  async userAgentDetail(caller: Caller, view: ProjectView | null, id: number) {
    const { snippet } = view ? await this.reachProject(caller, view, id) : await this.reach(caller, id);
    if (!canReadUserAgentDetail(caller)) throw forbidden();
    return {
      user_agent: snippet.userAgent,
      ip_address: snippet.ipAddress,
      akismet_submitted: snippet.akismetSubmitted,
    };
  }

  /**
   * A file's bytes, streamed from git: the first file at the tip of `main` when `ref` and `filePath` are
   * left out, else the file at `ref`.
   */
  async raw(caller: Caller, view: ProjectView | null, id: number, at?: { ref: string; filePath: string }) {
    const { snippet } = view ? await this.reachProject(caller, view, id) : await this.reach(caller, id);
    const commit = await this.git.resolve(snippet.repositoryStorage, snippet.id, at?.ref);
    if (at && !commit) throw notFound('Reference');
    const filePath = at?.filePath ?? snippet.filePaths[0];
    const file =
      commit && filePath
        ? await this.git.stream(snippet.repositoryStorage, snippet.id, commit, filePath)
        : null;
    if (!file && at) throw notFound('File');
    return { fileName: filePath?.split('/').pop() ?? '', file };
  }

  // ---- writes ----

  async create(
    caller: Caller,
    view: ProjectView | null,
    input: SnippetCreateInput,
    request: RequestInfo,
  ): Promise<SnippetRecords> {
    if (view) this.assertFeature(view);
    const user = caller.user!;
    const actions = this.createActions(input);
    const storage = view?.project.repositoryStorage ?? DEFAULT_STORAGE;
    const now = new Date();
    let createdId: number | null = null;
    try {
      const snippet = await this.dataSource.transaction(async (tx) => {
        const inserted = await tx.getRepository(Snippet).insert({
          projectId: view?.project.id ?? null,
          authorId: user.id,
          title: input.title,
          description: input.description ?? null,
          visibilityLevel: Visibility[input.visibility ?? 'private'],
          repositoryStorage: storage,
          repositorySize: 0,
          filePaths: [],
          userAgent: request.userAgent ?? '',
          ipAddress: request.ip ?? null,
          akismetSubmitted: false,
          createdAt: now,
          updatedAt: now,
        });
        const id = inserted.identifiers[0].id as number;
        await this.git.create(tx, storage, id, {
          actions,
          message: 'Initial commit',
          author: signature(user),
        });
        createdId = id;
        await this.refresh(tx, id, storage, view?.project.id ?? null, now);
        return tx.getRepository(Snippet).findOneByOrFail({ id });
      });
      return this.records([snippet]);
    } catch (err) {
      // The row is gone with the transaction: so must its repository be.
      if (createdId !== null) await this.git.retire(storage, createdId).catch(() => undefined);
      if (err instanceof CommitBuildError) throw repositoryError('creating', err);
      throw err;
    }
  }

  async updateProject(caller: Caller, view: ProjectView, id: number, input: SnippetUpdateInput) {
    return this.update(caller, await this.reachProject(caller, view, id), input);
  }

  /** Personal snippets only: a project's are changed through their project. */
  async updatePersonal(caller: Caller, id: number, input: SnippetUpdateInput) {
    const reached = await this.reach(caller, id);
    if (reached.snippet.projectId !== null) throw snippetNotFound();
    return this.update(caller, reached, input);
  }

  async removeProject(caller: Caller, view: ProjectView, id: number): Promise<void> {
    await this.remove(caller, await this.reachProject(caller, view, id));
  }

  async removePersonal(caller: Caller, id: number): Promise<void> {
    const reached = await this.reach(caller, id);
    if (reached.snippet.projectId !== null) throw snippetNotFound();
    await this.remove(caller, reached);
  }

  // ---- git over HTTP ----

  /**
   * The repository of snippet `id` for a clone or push by the caller: 404 (ApiError) when the caller may
   * not read it (or `projectPath` is not its project), 403 when they may not push to it.
   */
  async gitTarget(
    caller: Caller,
    projectPath: string | null,
    id: number,
    pushing: boolean,
  ): Promise<SnippetGitTarget> {
    const reached = await this.reach(caller, id);
    const { snippet, view } = reached;
    const actualPath = view ? `${view.project.namespace.fullPath}/${view.project.path}` : null;
    if ((projectPath ?? null)?.toLowerCase() !== actualPath?.toLowerCase()) throw snippetNotFound();
    // An archived project's snippets are read-only, as its code is.
    if (pushing && view?.project.archived) throw forbidden();
    if (pushing) this.assertAdmin(caller, reached);
    return {
      dir: this.git.dir(snippet.repositoryStorage, snippet.id),
      // GitLab's snippet check: only the default branch, never created or deleted.
      refusal: (changes) =>
        changes.some((c) => c.ref !== HEAD || ZERO.test(c.oldSha) || ZERO.test(c.newSha))
          ? 'You can not create or delete branches.'
          : null,
      recorded: () =>
        this.dataSource.transaction((tx) =>
          this.refresh(tx, snippet.id, snippet.repositoryStorage, snippet.projectId, new Date()),
        ),
    };
  }

  // ---- internals ----

  private async update(caller: Caller, reached: Reached, input: SnippetUpdateInput): Promise<SnippetRecords> {
    const { snippet } = reached;
    this.assertAdmin(caller, reached);
    const actions = this.updateActions(snippet, input);
    const now = new Date();
    if (actions.length > 0) {
      try {
        // A repository write: refused while the repository moves between storages, as a project's.
        await this.services.writeGate.write(
          this.dataSource.manager,
          'snippet',
          snippet.id,
          readOnly,
          async () => {
            // Read again inside the gate: a move may have switched the storage since.
            const { repositoryStorage } = await this.dataSource
              .getRepository(Snippet)
              .findOneByOrFail({ id: snippet.id })
              .catch(() => {
                throw snippetNotFound();
              });
            snippet.repositoryStorage = repositoryStorage;
            await this.git.commit(repositoryStorage, snippet.id, {
              actions,
              message: 'Update snippet',
              author: signature(caller.user!),
            });
          },
        );
      } catch (err) {
        if (err instanceof CommitBuildError) throw repositoryError('updating', err);
        throw err;
      }
    }
    const updated = await this.dataSource.transaction(async (tx) => {
      const changes: Partial<Snippet> = { updatedAt: now };
      if (input.title !== undefined) changes.title = input.title;
      if (input.description !== undefined) changes.description = input.description;
      if (input.visibility !== undefined) changes.visibilityLevel = Visibility[input.visibility];
      await tx.getRepository(Snippet).update(snippet.id, changes);
      if (actions.length > 0)
        await this.refresh(tx, snippet.id, snippet.repositoryStorage, snippet.projectId, now);
      const row = await tx.getRepository(Snippet).findOneBy({ id: snippet.id });
      if (!row) throw snippetNotFound();
      return row;
    });
    return this.records([updated]);
  }

  private async remove(caller: Caller, reached: Reached): Promise<void> {
    const { snippet } = reached;
    this.assertAdmin(caller, reached);
    await this.dataSource.transaction(async (tx) => {
      const result = await tx.getRepository(Snippet).delete(snippet.id);
      if (!result.affected) throw snippetNotFound();
      if (snippet.projectId !== null) await this.updateStatistics(tx, snippet.projectId);
      await this.events.publish(tx, 'snippet.deleted', {
        snippetId: snippet.id,
        storage: snippet.repositoryStorage,
        projectId: snippet.projectId,
      });
    });
    // The path frees at once; the job removes what is left, and retries this if it failed.
    await this.git.retire(snippet.repositoryStorage, snippet.id).catch(() => undefined);
  }

  /**
   * Removes the repositories of snippet rows gone (the trigger records each): after a snippet's
   * deletion, and after its project's, whose rows went with the project.
   */
  async removeDeletedRepositories(): Promise<void> {
    const rows: Array<{ snippet_id: number; repository_storage: string }> = await this.dataSource.query(
      'SELECT snippet_id, repository_storage FROM snippet_repository_removals ORDER BY snippet_id LIMIT 1000',
    );
    for (const row of rows) {
      await this.git.retire(row.repository_storage, row.snippet_id);
      await this.git.emptyTrash(row.repository_storage, row.snippet_id);
      await this.dataSource.query('DELETE FROM snippet_repository_removals WHERE snippet_id = $1', [
        row.snippet_id,
      ]);
    }
  }

  /** Reads the repository's files and size into the row and the project's statistics. */
  private async refresh(
    tx: EntityManager,
    id: number,
    storage: string,
    projectId: number | null,
    now: Date,
  ): Promise<void> {
    const commit = await this.git.resolve(storage, id);
    const files = await this.git.files(storage, id, commit);
    const size = await this.git.size(storage, id);
    await tx.getRepository(Snippet).update(id, {
      filePaths: files.map((file) => file.path),
      repositorySize: size,
      updatedAt: now,
    });
    if (projectId !== null) await this.updateStatistics(tx, projectId);
  }

  private async updateStatistics(tx: EntityManager, projectId: number): Promise<void> {
    await tx.query(
      `WITH total AS (SELECT COALESCE(sum(repository_size), 0) AS size FROM snippets WHERE project_id = $1)
       UPDATE project_statistics SET snippets_size = total.size,
         storage_size = repository_size + lfs_objects_size + job_artifacts_size + pipeline_artifacts_size
           + packages_size + total.size + uploads_size + wiki_size
       FROM total WHERE project_id = $1`,
      [projectId],
    );
  }

  private createActions(input: SnippetCreateInput): FileAction[] {
    if (input.files !== undefined && input.content !== undefined)
      throw badParameter('content, files are mutually exclusive');
    if (input.files === undefined && input.content === undefined)
      throw badParameter('content, files are missing, exactly one parameter must be provided');
    if (input.content !== undefined && input.file_name === undefined)
      throw badParameter('file_name is missing');
    const files = input.files ?? [{ file_path: input.file_name!, content: input.content! }];
    return files.map((file) => ({
      action: 'create',
      filePath: file.file_path,
      content: Buffer.from(file.content, 'utf8'),
    }));
  }

  private updateActions(snippet: Snippet, input: SnippetUpdateInput): FileAction[] {
    const given = ['title', 'description', 'visibility', 'files', 'content', 'file_name'] as const;
    if (given.every((key) => input[key] === undefined))
      throw badParameter(`${given.join(', ')} are missing, at least one parameter must be provided`);
    if (input.files !== undefined && input.content !== undefined)
      throw badParameter('content, files are mutually exclusive');
    if (input.files)
      return input.files.map((file) => ({
        action: file.action,
        filePath: file.file_path ?? '',
        previousPath: file.previous_path,
        content: file.content === undefined ? undefined : Buffer.from(file.content, 'utf8'),
      }));
    if (input.content === undefined && input.file_name === undefined) return [];
    if (snippet.filePaths.length > 1) throw new ApiError(400, { message: { error: MULTIPLE_FILES } });
    const current = snippet.filePaths[0];
    const content = input.content === undefined ? undefined : Buffer.from(input.content, 'utf8');
    if (current === undefined)
      return [{ action: 'create', filePath: input.file_name ?? '', content: content ?? Buffer.alloc(0) }];
    if (input.file_name !== undefined && input.file_name !== current)
      return [{ action: 'move', filePath: input.file_name, previousPath: current, content }];
    return content === undefined ? [] : [{ action: 'update', filePath: current, content }];
  }

  private assertFeature(view: ProjectView): void {
    if (!projectSettings(view.project.settings).snippets_enabled) throw forbidden();
  }

  private assertAdmin(caller: Caller, { snippet, view }: Reached): void {
    if (!canAdminSnippet(caller, snippet, view?.accessLevel ?? 0)) throw forbidden();
  }

  /** A snippet of the resolved project the caller may read, else 404 Snippet. */
  private async reachProject(caller: Caller, view: ProjectView, id: number): Promise<Reached> {
    this.assertFeature(view);
    const snippet = await this.dataSource
      .getRepository(Snippet)
      .findOneBy({ id, projectId: view.project.id });
    if (!snippet || !canReadSnippet(caller, snippet, view.accessLevel)) throw snippetNotFound();
    return { snippet, view };
  }

  /** Any snippet the caller may read: a project's only through a project they see with snippets on. */
  private async reach(caller: Caller, id: number): Promise<Reached> {
    const snippet = await this.dataSource.getRepository(Snippet).findOneBy({ id });
    if (!snippet) throw snippetNotFound();
    let view: ProjectView | null = null;
    if (snippet.projectId !== null) {
      view = await this.services.projects.find(caller, snippet.projectId).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) throw snippetNotFound();
        throw err;
      });
      if (!projectSettings(view.project.settings).snippets_enabled) throw snippetNotFound();
    }
    if (!canReadSnippet(caller, snippet, view?.accessLevel ?? 0)) throw snippetNotFound();
    return { snippet, view };
  }

  private query(): SelectQueryBuilder<Snippet> {
    return this.dataSource.getRepository(Snippet).createQueryBuilder('s');
  }

  /** Snippets readable by visibility alone, or by authorship. */
  private byVisibility(query: SelectQueryBuilder<Snippet>, caller: Caller) {
    const user = caller.user;
    const minimum = !user || user.external ? Visibility.public : Visibility.internal;
    query.andWhere('(s.visibility_level >= :minimumSnippet OR s.author_id = :authorId)', {
      minimumSnippet: minimum,
      authorId: user?.id ?? 0,
    });
  }

  /**
   * The snippets (joined with projects `p` and namespaces `n`) a signed-in caller who is no administrator
   * may read: personal ones by visibility or authorship; project ones in projects they see with snippets
   * on, by visibility, authorship or membership.
   */
  private readable(query: SelectQueryBuilder<Snippet>, caller: Caller) {
    const user = caller.user!;
    const member = projectMembershipSql('p', 'n');
    query.andWhere(
      `((s.project_id IS NULL AND (s.visibility_level >= :minimum OR s.author_id = :callerId))
        OR (s.project_id IS NOT NULL AND COALESCE((p.settings->>'snippets_enabled')::boolean, true)
          AND (p.visibility_level >= :minimum OR ${member})
          AND (s.visibility_level >= :minimum OR s.author_id = :callerId OR ${member})))`,
      { minimum: user.external ? Visibility.public : Visibility.internal, callerId: user.id },
    );
  }

  private async page(query: SelectQueryBuilder<Snippet>, params: PageParams, request: RequestInfo) {
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const [items, total] = await query
      .orderBy('s.id', 'DESC')
      .skip((page - 1) * perPage)
      .take(perPage)
      .getManyAndCount();
    return { ...(await this.records(items)), headers: offsetHeaders(total, page, perPage, request) };
  }

  /** Authors and project paths of a page of snippets, in two queries. */
  private async records(items: Snippet[]): Promise<SnippetRecords> {
    const authorIds = [...new Set(items.map((s) => s.authorId))];
    const projectIds = [...new Set(items.flatMap((s) => (s.projectId === null ? [] : [s.projectId])))];
    const authors = new Map<number, User>();
    if (authorIds.length > 0)
      for (const user of await this.dataSource.getRepository(User).findBy({ id: In(authorIds) }))
        authors.set(user.id, user);
    const projectPaths = new Map<number, string>();
    if (projectIds.length > 0) {
      const rows: Array<{ id: number; full_path: string }> = await this.dataSource.query(
        `SELECT p.id, n.full_path || '/' || p.path AS full_path
         FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = ANY($1::int[])`,
        [projectIds],
      );
      for (const row of rows) projectPaths.set(Number(row.id), row.full_path);
    }
    return { items, authors, projectPaths };
  }
}

const signature = (user: { name: string; email: string }) => ({ name: user.name, email: user.email });
