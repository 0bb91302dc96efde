import { createHash, randomBytes } from 'node:crypto';
import { In, type DataSource } from 'typeorm';
import type { operations } from '../../generated/openapi.js';
import { canCommentWhenLocked, canDeleteNote, canEditNote, canReadInternalNotes } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { forbidden, notFound } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { offsetHeaders, perPageOf, type RequestInfo } from '../core/pagination.js';
import type { MergeRequest } from '../merge_requests/merge-request.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { User } from '../users/user.entity.js';
import { Note } from './note.entity.js';
import type { MergeRequestChanged } from '../merge_requests/merge-requests.events.js';

type ListParams = NonNullable<operations['listMergeRequestNotes']['parameters']['query']>;

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

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'mergeRequests'>,
  ) {
    this.dataSource = deps.dataSource;
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

  async create(
    caller: Caller,
    view: ProjectView,
    iid: number,
    params: { body: string; internal?: boolean; confidential?: boolean },
  ): Promise<NoteRecords> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    if (mergeRequest.discussionLocked && !canCommentWhenLocked(caller, view.accessLevel)) throw forbidden();
    const internal = params.internal ?? params.confidential ?? false;
    if (internal && !canReadInternalNotes(caller, view.accessLevel)) throw forbidden();
    const now = new Date();
    const { identifiers } = await this.dataSource.getRepository(Note).insert({
      projectId: view.project.id,
      noteableType: 'MergeRequest',
      noteableId: mergeRequest.id,
      authorId: caller.user?.id ?? null,
      body: params.body,
      system: false,
      type: null,
      discussionId: newDiscussionId(),
      internal,
      createdAt: now,
      updatedAt: now,
    });
    const note = await this.dataSource
      .getRepository(Note)
      .findOneByOrFail({ id: identifiers[0].id as number });
    return { items: [note], mergeRequest, users: await this.users([note]) };
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
    for (const [kind, body] of systemNoteBodies(event.changes)) {
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

/** GitLab's wording of each change, keyed so that a retry finds the same note. */
function systemNoteBodies(changes: MergeRequestChanged['changes']): Array<[string, string]> {
  const bodies: Array<[string, string]> = [];
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
