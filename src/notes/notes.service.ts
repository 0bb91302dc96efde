import { createHash, randomBytes } from 'node:crypto';
import { In, IsNull, Not, type DataSource, type EntityManager, type FindOptionsWhere } from 'typeorm';
import type { components, operations } from '../../generated/openapi.js';
import {
  canCommentWhenLocked,
  canDeleteNote,
  canEditNote,
  canReadInternalNotes,
  canResolveDiscussion,
} from './abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, badParameter, forbidden, notFound } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { offsetHeaders, perPageOf, type RequestInfo } from '../core/pagination.js';
import type { MergeRequest } from '../merge_requests/merge-request.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { User } from '../users/user.entity.js';
import { MergeRequestDiff } from '../merge_requests/merge-request.entity.js';
import type { FileDiff } from '../git/diffs.js';
import { isImagePath, positionLine, positionLineCode } from './diff-position.js';
import { Note, type DiffPosition, type LineRangeEnd } from './note.entity.js';
import type { MergeRequestChanged } from '../merge_requests/merge-requests.events.js';

type ListParams = NonNullable<operations['listMergeRequestNotes']['parameters']['query']>;
type PageParams = { page?: number; per_page?: number };
type CreateParams = { body: string; internal?: boolean; confidential?: boolean; commitId?: string | null };
type PositionParams = NonNullable<components['schemas']['DiscussionCreate']['position']>;
/** One end of a line range as the API takes it; its line code and type are found again on the diff. */
type LineRangeEndInput = { old_line?: number | null; new_line?: number | null };
/** A position as the API takes it: a diff thread's, or a draft note's, which may span lines. */
export type PositionInput = PositionParams & {
  line_range?: { start: LineRangeEndInput; end: LineRangeEndInput } | null;
};
/** Where a diff note sits, as stored. */
export type Placement = { position: DiffPosition; lineCode: string | null };

/** What a draft note publishes as, checked beforehand with `findThread` and `place`. */
export interface PendingNote {
  body: string;
  /** The commit a new diff thread is about. */
  commitId: string | null;
  /** The thread it answers, or null for a note (or, with a placement, a diff thread) of its own. */
  thread: Discussion | null;
  placement: Placement | null;
  /** Resolve the answered thread (when the caller may), else unresolve it, as GitLab's publication does. */
  resolve: boolean;
}

/** One discussion: its id and its notes, oldest first. */
export interface Discussion {
  id: string;
  notes: Note[];
}

/** Discussions with their merge request and the users they name. */
export interface DiscussionRecords {
  discussions: Discussion[];
  mergeRequest: MergeRequest;
  users: Map<number, User>;
}

const badRequest = (reason: string) => new ApiError(400, { message: `400 Bad request - ${reason}` });

/** A pending reply whose thread was deleted meanwhile. */
export const threadGone = () => badRequest('Unable to save Note: Thread to reply to cannot be found');

/** Notes with their merge request and the users they name, loaded a page at a time. */
export interface NoteRecords {
  items: Note[];
  mergeRequest: MergeRequest;
  users: Map<number, User>;
}

/** GitLab's discussion ids: 40 hex characters. */
const newDiscussionId = () => randomBytes(20).toString('hex');

export class NotesService {
  private readonly dataSource: DataSource;
  private readonly events: Events;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'mergeRequests'>,
  ) {
    this.dataSource = deps.dataSource;
    this.events = deps.events;
  }

  async list(
    caller: Caller,
    view: ProjectView,
    iid: number,
    params: ListParams,
    request: RequestInfo,
  ): Promise<NoteRecords & { headers: Record<string, string> }> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const column = params.order_by === 'updated_at' ? 'n.updated_at' : 'n.created_at';
    const direction = params.sort === 'asc' ? 'ASC' : 'DESC';
    const query = this.dataSource
      .getRepository(Note)
      .createQueryBuilder('n')
      .where('n.noteable_id = :id', { id: mergeRequest.id });
    if (!canReadInternalNotes(caller, view.accessLevel)) query.andWhere('NOT n.internal');
    const [items, total] = await query
      .orderBy(column, direction)
      .addOrderBy('n.id', direction)
      .skip((page - 1) * perPage)
      .take(perPage)
      .getManyAndCount();
    return {
      items,
      mergeRequest,
      users: await this.users(items),
      headers: offsetHeaders(total, page, perPage, request),
    };
  }

  async get(caller: Caller, view: ProjectView, iid: number, noteId: number): Promise<NoteRecords> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const note = await this.find(caller, view, mergeRequest, noteId);
    return { items: [note], mergeRequest, users: await this.users([note]) };
  }

  async create(caller: Caller, view: ProjectView, iid: number, params: CreateParams): Promise<NoteRecords> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const note = await this.insertNote(caller, view, mergeRequest, params, null, newDiscussionId());
    return { items: [note], mergeRequest, users: await this.users([note]) };
  }

  /** A user's note, after the lock and internal-note rules. */
  private async insertNote(
    caller: Caller,
    view: ProjectView,
    mergeRequest: MergeRequest,
    params: CreateParams,
    type: Note['type'],
    discussionId: string,
    manager: EntityManager = this.dataSource.manager,
    placement: Placement | null = null,
  ): Promise<Note> {
    if (mergeRequest.discussionLocked && !canCommentWhenLocked(caller, view.accessLevel)) throw forbidden();
    const internal = params.internal ?? params.confidential ?? false;
    if (internal && !canReadInternalNotes(caller, view.accessLevel)) throw forbidden();
    const now = new Date();
    const { identifiers } = await manager.getRepository(Note).insert({
      projectId: view.project.id,
      noteableType: 'MergeRequest',
      noteableId: mergeRequest.id,
      authorId: caller.user?.id ?? null,
      body: params.body,
      system: false,
      type,
      discussionId,
      internal,
      position: placement?.position ?? null,
      lineCode: placement?.lineCode ?? null,
      commitId: placement ? (params.commitId ?? null) : null,
      createdAt: now,
      updatedAt: now,
    });
    return manager.getRepository(Note).findOneByOrFail({ id: identifiers[0].id as number });
  }

  async update(
    caller: Caller,
    view: ProjectView,
    iid: number,
    noteId: number,
    body: string,
  ): Promise<NoteRecords> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const note = await this.find(caller, view, mergeRequest, noteId);
    if (note.system || !canEditNote(caller, note.authorId)) throw forbidden();
    if (mergeRequest.discussionLocked && !canCommentWhenLocked(caller, view.accessLevel)) throw forbidden();
    await this.dataSource.getRepository(Note).update(note.id, { body, updatedAt: new Date() });
    const updated = await this.dataSource.getRepository(Note).findOneByOrFail({ id: note.id });
    return { items: [updated], mergeRequest, users: await this.users([updated]) };
  }

  async remove(caller: Caller, view: ProjectView, iid: number, noteId: number): Promise<void> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const note = await this.find(caller, view, mergeRequest, noteId);
    if (note.system || !canDeleteNote(caller, view.accessLevel, note.authorId)) throw forbidden();
    await this.dataSource.getRepository(Note).delete(note.id);
  }

  // ---- discussions ----

  async listDiscussions(
    caller: Caller,
    view: ProjectView,
    iid: number,
    params: PageParams,
    request: RequestInfo,
  ): Promise<DiscussionRecords & { headers: Record<string, string> }> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const hideInternal = !canReadInternalNotes(caller, view.accessLevel);
    const visible = hideInternal ? 'AND NOT internal' : '';
    // A page of discussions in SQL, oldest first, with the count in the same round trip.
    const rows = (await this.dataSource.query(
      `SELECT discussion_id, count(*) OVER ()::int AS total FROM notes
       WHERE noteable_id = $1 ${visible}
       GROUP BY discussion_id ORDER BY min(created_at), min(id) LIMIT $2 OFFSET $3`,
      [mergeRequest.id, perPage, (page - 1) * perPage],
    )) as Array<{ discussion_id: string; total: number }>;
    let total = rows[0]?.total;
    if (total === undefined) {
      const [row] = (await this.dataSource.query(
        `SELECT count(DISTINCT discussion_id)::int AS total FROM notes WHERE noteable_id = $1 ${visible}`,
        [mergeRequest.id],
      )) as Array<{ total: number }>;
      total = row.total;
    }
    const discussions = await this.discussionsOf(
      mergeRequest,
      rows.map((row) => row.discussion_id),
      hideInternal,
    );
    return {
      discussions,
      mergeRequest,
      users: await this.users(discussions.flatMap((d) => d.notes)),
      headers: offsetHeaders(total, page, perPage, request),
    };
  }

  async getDiscussion(
    caller: Caller,
    view: ProjectView,
    iid: number,
    discussionId: string,
  ): Promise<DiscussionRecords> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    return this.discussionRecords(
      mergeRequest,
      await this.findDiscussion(caller, view, mergeRequest, discussionId),
    );
  }

  async createDiscussion(
    caller: Caller,
    view: ProjectView,
    iid: number,
    params: CreateParams & { position?: PositionParams },
  ): Promise<DiscussionRecords> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const placement = params.position ? await this.place(view, mergeRequest, params.position) : null;
    const note = await this.insertNote(
      caller,
      view,
      mergeRequest,
      params,
      placement ? 'DiffNote' : 'DiscussionNote',
      newDiscussionId(),
      this.dataSource.manager,
      placement,
    );
    return this.discussionRecords(mergeRequest, { id: note.discussionId, notes: [note] });
  }

  /** A reply; replying to a plain note makes it a thread, as GitLab does. */
  async reply(
    caller: Caller,
    view: ProjectView,
    iid: number,
    discussionId: string,
    params: CreateParams,
  ): Promise<NoteRecords> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const discussion = await this.findDiscussion(caller, view, mergeRequest, discussionId);
    if (discussion.notes.some((note) => note.system)) throw badRequest('Discussion cannot be replied to');
    const note = await this.dataSource.transaction((tx) =>
      this.appendToThread(caller, view, mergeRequest, discussion, params, tx),
    );
    return { items: [note], mergeRequest, users: await this.users([note]) };
  }

  /** A note added to a thread: its type and position are the thread's. */
  private async appendToThread(
    caller: Caller,
    view: ProjectView,
    mergeRequest: MergeRequest,
    discussion: Discussion,
    params: CreateParams,
    tx: EntityManager,
  ): Promise<Note> {
    await tx.query(
      `UPDATE notes SET type = 'DiscussionNote' WHERE discussion_id = $1 AND noteable_id = $2 AND type IS NULL`,
      [discussion.id, mergeRequest.id],
    );
    const [first] = discussion.notes;
    const type = first.type ?? 'DiscussionNote';
    const placement = first.position ? { position: first.position, lineCode: first.lineCode } : null;
    return this.insertNote(caller, view, mergeRequest, params, type, discussion.id, tx, placement);
  }

  /**
   * Writes a published draft in the caller's transaction, so that a batch is all or nothing: a reply (its
   * thread must still be there), whose thread is then resolved or unresolved, or a note or diff thread of
   * its own.
   */
  async writePending(
    caller: Caller,
    view: ProjectView,
    mergeRequest: MergeRequest,
    pending: PendingNote,
    tx: EntityManager,
  ): Promise<Note> {
    const { thread, placement } = pending;
    if (!thread) {
      const params = { body: pending.body, commitId: pending.commitId };
      const type = placement ? 'DiffNote' : null;
      return this.insertNote(caller, view, mergeRequest, params, type, newDiscussionId(), tx, placement);
    }
    if (!(await tx.getRepository(Note).existsBy({ noteableId: mergeRequest.id, discussionId: thread.id })))
      throw threadGone();
    const note = await this.appendToThread(caller, view, mergeRequest, thread, { body: pending.body }, tx);
    const resolve = pending.resolve && canResolveDiscussion(caller, view.accessLevel, mergeRequest.authorId);
    const resolvable = {
      noteableId: mergeRequest.id,
      discussionId: thread.id,
      system: false,
      type: Not(IsNull()),
    };
    await this.markResolved(tx, caller, mergeRequest, resolvable, resolve);
    return note;
  }

  /** Resolves or unresolves every note of a thread. */
  async resolveDiscussion(
    caller: Caller,
    view: ProjectView,
    iid: number,
    discussionId: string,
    resolved: boolean,
  ): Promise<DiscussionRecords> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const discussion = await this.findDiscussion(caller, view, mergeRequest, discussionId);
    if (!discussion.notes.some(isResolvable)) throw badRequest('Discussion is not resolvable');
    if (!canResolveDiscussion(caller, view.accessLevel, mergeRequest.authorId)) throw forbidden();
    await this.setResolved(
      caller,
      mergeRequest,
      discussion.notes.filter(isResolvable).map((note) => note.id),
      resolved,
    );
    return this.getDiscussion(caller, view, iid, discussion.id);
  }

  /** Exactly one of `body` (its author edits) or `resolved` (who may resolve the thread). */
  async updateDiscussionNote(
    caller: Caller,
    view: ProjectView,
    iid: number,
    discussionId: string,
    noteId: number,
    params: { body?: string; resolved?: boolean },
  ): Promise<NoteRecords> {
    if (params.body !== undefined && params.resolved !== undefined)
      throw badParameter('body, resolved are mutually exclusive');
    if (params.body === undefined && params.resolved === undefined)
      throw badParameter('body, resolved are missing, exactly one parameter must be provided');
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const note = this.noteOf(await this.findDiscussion(caller, view, mergeRequest, discussionId), noteId);
    if (params.body !== undefined) return this.update(caller, view, iid, note.id, params.body);
    if (!isResolvable(note)) throw badRequest('Note is not resolvable');
    if (!canResolveDiscussion(caller, view.accessLevel, mergeRequest.authorId)) throw forbidden();
    await this.setResolved(caller, mergeRequest, [note.id], params.resolved === true);
    return this.get(caller, view, iid, note.id);
  }

  async removeDiscussionNote(
    caller: Caller,
    view: ProjectView,
    iid: number,
    discussionId: string,
    noteId: number,
  ): Promise<void> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const note = this.noteOf(await this.findDiscussion(caller, view, mergeRequest, discussionId), noteId);
    await this.remove(caller, view, iid, note.id);
  }

  /**
   * A position checked against the merge request's versions: their diff refs and the file's diff, then what
   * its type needs. A text position that does not hold has, as in GitLab, a blank line code; an image or file
   * position must be complete, as GitLab checks, and on a file of the diff (an image for an image position).
   */
  async place(view: ProjectView, mergeRequest: MergeRequest, position: PositionInput): Promise<Placement> {
    const refs = {
      base_sha: position.base_sha,
      start_sha: position.start_sha,
      head_sha: position.head_sha,
      old_path: position.old_path ?? position.new_path,
      new_path: position.new_path,
    };
    if (position.position_type === 'text') {
      const file = await this.diffFile(view, mergeRequest, refs);
      const code = file ? positionLineCode(file, position.old_line, position.new_line) : null;
      const range = file && position.line_range ? lineRangeOn(file, position.line_range) : null;
      if (!code || (position.line_range && !range))
        throw badRequest(`Note {:line_code=>["can't be blank", "must be a valid line code"]}`);
      const lines = { old_line: position.old_line ?? null, new_line: position.new_line ?? null };
      const text = { ...refs, position_type: 'text' as const, ...lines };
      return { lineCode: code, position: range ? { ...text, line_range: range } : text };
    }
    const incomplete = () => badRequest('Note {:position=>["is incomplete"]}');
    const invalid = () => badRequest('Note {:position=>["is invalid"]}');
    if (position.position_type === 'file') {
      if (!position.old_path) throw incomplete();
      if (!(await this.diffFile(view, mergeRequest, refs))) throw invalid();
      return { lineCode: null, position: { ...refs, position_type: 'file' } };
    }
    const { width, height, x, y } = position;
    if (width === undefined || height === undefined || x === undefined || y === undefined) throw incomplete();
    const file = await this.diffFile(view, mergeRequest, refs);
    if (!file || !isImagePath(file.deletedFile ? file.oldPath : file.newPath)) throw invalid();
    return { lineCode: null, position: { ...refs, position_type: 'image', width, height, x, y } };
  }

  /** The file a position names in the diff of the version its diff refs name, if there is one. */
  private async diffFile(
    view: ProjectView,
    mergeRequest: MergeRequest,
    refs: { base_sha: string; start_sha: string; head_sha: string; old_path: string; new_path: string },
  ): Promise<FileDiff | null> {
    const version = await this.dataSource.getRepository(MergeRequestDiff).findOneBy({
      mergeRequestId: mergeRequest.id,
      headCommitSha: refs.head_sha,
      startCommitSha: refs.start_sha,
      baseCommitSha: refs.base_sha,
    });
    if (!version) return null;
    const { diffs } = await this.services.mergeRequests.version(view, mergeRequest.iid, version.id);
    return (
      diffs.diffs.find((entry) => entry.newPath === refs.new_path && entry.oldPath === refs.old_path) ?? null
    );
  }

  private noteOf(discussion: Discussion, noteId: number): Note {
    const note = discussion.notes.find((candidate) => candidate.id === noteId);
    if (!note) throw notFound('Note');
    return note;
  }

  /** Resolving may let an automatic merge through: it is tried after the change. */
  private async setResolved(
    caller: Caller,
    mergeRequest: MergeRequest,
    noteIds: number[],
    resolved: boolean,
  ): Promise<void> {
    if (noteIds.length === 0) return;
    await this.dataSource.transaction((tx) =>
      this.markResolved(tx, caller, mergeRequest, { id: In(noteIds) }, resolved),
    );
  }

  private async markResolved(
    tx: EntityManager,
    caller: Caller,
    mergeRequest: MergeRequest,
    notes: FindOptionsWhere<Note>,
    resolved: boolean,
  ): Promise<void> {
    await tx
      .getRepository(Note)
      .update(
        notes,
        resolved
          ? { resolvedAt: new Date(), resolvedById: caller.user?.id ?? null }
          : { resolvedAt: null, resolvedById: null },
      );
    if (resolved && mergeRequest.autoMerge)
      await this.events.publish(tx, 'merge_request.auto_merge_check', { mergeRequestId: mergeRequest.id });
  }

  private async findDiscussion(
    caller: Caller,
    view: ProjectView,
    mergeRequest: MergeRequest,
    discussionId: string,
  ): Promise<Discussion> {
    const discussion = await this.findThread(caller, view, mergeRequest, discussionId);
    if (!discussion) throw notFound('Discussion');
    return discussion;
  }

  /** The discussion by that id, or null when the merge request has none the caller may see. */
  async findThread(
    caller: Caller,
    view: ProjectView,
    mergeRequest: MergeRequest,
    discussionId: string,
  ): Promise<Discussion | null> {
    const hideInternal = !canReadInternalNotes(caller, view.accessLevel);
    const [discussion] = await this.discussionsOf(mergeRequest, [discussionId], hideInternal);
    return discussion ?? null;
  }

  /** The notes of the given discussions, in the order of `ids`: one query. */
  private async discussionsOf(
    mergeRequest: MergeRequest,
    ids: string[],
    hideInternal: boolean,
  ): Promise<Discussion[]> {
    if (ids.length === 0) return [];
    const query = this.dataSource
      .getRepository(Note)
      .createQueryBuilder('n')
      .where('n.noteable_id = :id', { id: mergeRequest.id })
      .andWhere('n.discussion_id IN (:...ids)', { ids })
      .orderBy('n.created_at', 'ASC')
      .addOrderBy('n.id', 'ASC');
    if (hideInternal) query.andWhere('NOT n.internal');
    const byId = new Map<string, Note[]>();
    for (const note of await query.getMany()) {
      const list = byId.get(note.discussionId) ?? [];
      list.push(note);
      byId.set(note.discussionId, list);
    }
    return ids.flatMap((id) => {
      const notes = byId.get(id);
      return notes ? [{ id, notes }] : [];
    });
  }

  private async discussionRecords(
    mergeRequest: MergeRequest,
    discussion: Discussion,
  ): Promise<DiscussionRecords> {
    return {
      discussions: [discussion],
      mergeRequest,
      users: await this.users(discussion.notes),
    };
  }

  /**
   * The system notes of one merge request update, written once however often the job runs: each note's
   * discussion id derives from the update's id, and the partial unique index refuses a second copy.
   */
  async writeSystemNotes(event: MergeRequestChanged): Promise<void> {
    const [mr] = (await this.dataSource.query(
      'SELECT id, target_project_id FROM merge_requests WHERE id = $1',
      [event.mergeRequestId],
    )) as Array<{ id: number; target_project_id: number }>;
    if (!mr) return;
    const at = new Date(event.at);
    const { assignees, reviewers } = event.changes;
    const ids = [assignees, reviewers].flatMap((list) => [...(list?.added ?? []), ...(list?.removed ?? [])]);
    const names = new Map<number, string>();
    if (ids.length > 0)
      for (const user of await this.dataSource.getRepository(User).findBy({ id: In(ids) }))
        names.set(user.id, `@${user.username}`);
    for (const [kind, body] of systemNoteBodies(event.changes, names)) {
      const discussionId = createHash('sha1').update(`${event.changeId}:${kind}`).digest('hex');
      await this.dataSource.query(
        `INSERT INTO notes (project_id, noteable_type, noteable_id, author_id, body, system, discussion_id,
           created_at, updated_at)
         VALUES ($1, 'MergeRequest', $2, $3, $4, true, $5, $6, $6)
         ON CONFLICT (discussion_id) WHERE system DO NOTHING`,
        [mr.target_project_id, mr.id, event.actorId, body, discussionId, at],
      );
    }
  }

  private async find(caller: Caller, view: ProjectView, mergeRequest: MergeRequest, noteId: number) {
    const note = await this.dataSource
      .getRepository(Note)
      .findOneBy({ id: noteId, noteableId: mergeRequest.id });
    if (!note || (note.internal && !canReadInternalNotes(caller, view.accessLevel))) throw notFound('Note');
    return note;
  }

  private async users(notes: Note[]): Promise<Map<number, User>> {
    const ids = new Set<number>();
    for (const note of notes)
      for (const id of [note.authorId, note.resolvedById]) if (id !== null) ids.add(id);
    const users = new Map<number, User>();
    if (ids.size > 0)
      for (const user of await this.dataSource.getRepository(User).findBy({ id: In([...ids]) }))
        users.set(user.id, user);
    return users;
  }
}

/** A multi-line range whose ends are both lines of the file's diff, with their line codes; else null. */
function lineRangeOn(
  file: FileDiff,
  range: NonNullable<PositionInput['line_range']>,
): { start: LineRangeEnd; end: LineRangeEnd } | null {
  const end = (input: LineRangeEndInput): LineRangeEnd | null => {
    const line = positionLine(file, input.old_line, input.new_line);
    return (
      line && {
        line_code: line.lineCode,
        type: line.type,
        old_line: input.old_line ?? null,
        new_line: input.new_line ?? null,
      }
    );
  };
  const [first, last] = [end(range.start), end(range.end)];
  return first && last ? { start: first, end: last } : null;
}

/** Thread and diff notes can be resolved; plain and system notes cannot. */
export const isResolvable = (note: Note) => !note.system && note.type !== null;

/** GitLab's wording of each change, keyed so that a retry finds the same note. */
function systemNoteBodies(
  changes: MergeRequestChanged['changes'],
  names: Map<number, string>,
): Array<[string, string]> {
  const bodies: Array<[string, string]> = [];
  const list = (ids: number[]) => ids.flatMap((id) => names.get(id) ?? []).join(', ');
  const people = (key: string, ids: number[] | undefined, verb: string) => {
    if (ids?.length && list(ids)) bodies.push([key, `${verb} ${list(ids)}`]);
  };
  people('assigned', changes.assignees?.added, 'assigned to');
  people('unassigned', changes.assignees?.removed, 'unassigned');
  people('review_requested', changes.reviewers?.added, 'requested review from');
  people('review_removed', changes.reviewers?.removed, 'removed review request for');
  if (changes.state) bodies.push(['state', changes.state]);
  if (changes.title)
    bodies.push(['title', `changed title from **${changes.title.from}** to **${changes.title.to}**`]);
  if (changes.draft !== undefined)
    bodies.push([
      'draft',
      changes.draft ? 'marked this merge request as **draft**' : 'marked this merge request as **ready**',
    ]);
  if (changes.description) bodies.push(['description', 'changed the description']);
  if (changes.discussionLocked !== undefined)
    bodies.push([
      'lock',
      changes.discussionLocked
        ? 'locked the discussion in this merge request'
        : 'unlocked the discussion in this merge request',
    ]);
  return bodies;
}
