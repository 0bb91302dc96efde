import { In, type DataSource } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import { canCommentWhenLocked, canResolveDiscussion } from '../notes/abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, forbidden, recordNotFound, unauthorized, validationFailed } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { isUniqueViolation } from '../db/errors.js';
import type { MergeRequest } from '../merge_requests/merge-request.entity.js';
import type { DiffPosition } from '../notes/note.entity.js';
import {
  threadGone,
  type Discussion,
  type PendingNote,
  type Placement,
  type PositionInput,
} from '../notes/notes.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import { DraftNote } from './draft-note.entity.js';

type CreateParams = components['schemas']['DraftNoteCreate'];
type UpdateParams = components['schemas']['DraftNoteUpdate'];
type PositionParams = components['schemas']['DraftNotePositionCreate'];

/** Draft notes with the merge request they are on. */
export interface DraftRecords {
  items: DraftNote[];
  mergeRequest: MergeRequest;
}

const refused = (reason: string) => validationFailed({ base: [reason] });

/**
 * A position as the notes take it. `text` names both paths (the seed requires them); `image` and `file`
 * take either path for the other, and name no file without one.
 */
function positionInput(position: PositionParams): PositionInput {
  if (position.position_type === 'text') {
    for (const side of ['old_path', 'new_path'] as const)
      if (position[side] === undefined) throw new ApiError(400, { error: `position[${side}] is missing` });
  }
  const newPath = position.new_path ?? position.old_path;
  if (newPath === undefined)
    throw new ApiError(400, { message: '400 Bad request - Note {:position=>["is incomplete"]}' });
  return { ...position, new_path: newPath, old_path: position.old_path ?? newPath };
}

/** A stored position, to be checked again before it is published. */
const storedInput = (position: DiffPosition): PositionInput => ({ ...position });

export class DraftNotesService {
  private readonly dataSource: DataSource;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'mergeRequests' | 'notes'>,
  ) {
    this.dataSource = deps.dataSource;
  }

  async list(caller: Caller, view: ProjectView, iid: number): Promise<DraftRecords> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const items = await this.dataSource
      .getRepository(DraftNote)
      .find({ where: { mergeRequestId: mergeRequest.id, authorId: authorOf(caller) }, order: { id: 'ASC' } });
    return { items, mergeRequest };
  }

  async get(caller: Caller, view: ProjectView, iid: number, draftId: number): Promise<DraftRecords> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    return { items: [await this.find(caller, mergeRequest, draftId)], mergeRequest };
  }

  async create(caller: Caller, view: ProjectView, iid: number, params: CreateParams): Promise<DraftRecords> {
    const authorId = authorOf(caller);
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    // GitLab's `create_note` on a merge request whose discussion is locked.
    if (mergeRequest.discussionLocked && !canCommentWhenLocked(caller, view.accessLevel)) throw forbidden();
    const thread = params.in_reply_to_discussion_id
      ? await this.replyTarget(caller, view, mergeRequest, params.in_reply_to_discussion_id)
      : null;
    if (
      params.resolve_discussion &&
      !(thread && canResolveDiscussion(caller, view.accessLevel, mergeRequest.authorId))
    )
      throw refused('User is not allowed to resolve thread');
    const placement = params.position
      ? await this.services.notes.place(view, mergeRequest, positionInput(params.position))
      : null;
    const now = new Date();
    const repository = this.dataSource.getRepository(DraftNote);
    const inserted = await repository
      .insert({
        mergeRequestId: mergeRequest.id,
        authorId,
        note: params.note,
        discussionId: thread?.id ?? null,
        resolveDiscussion: params.resolve_discussion ?? false,
        commitId: params.commit_id ?? null,
        position: placement?.position ?? null,
        lineCode: placement?.lineCode ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .catch((err: unknown) => {
        if (isUniqueViolation(err)) throw validationFailed({ author_id: ['has already been taken'] });
        throw err;
      });
    const draft = await repository.findOneByOrFail({ id: inserted.identifiers[0].id as number });
    return { items: [draft], mergeRequest };
  }

  /** The note and/or the position; a position left out stays. */
  async update(
    caller: Caller,
    view: ProjectView,
    iid: number,
    draftId: number,
    params: UpdateParams,
  ): Promise<DraftRecords> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const draft = await this.find(caller, mergeRequest, draftId);
    if (params.note === undefined && params.position === undefined)
      throw new ApiError(400, { message: '400 Bad request - Missing params to modify' });
    const placement = params.position
      ? await this.services.notes.place(view, mergeRequest, positionInput(params.position))
      : undefined;
    const repository = this.dataSource.getRepository(DraftNote);
    await repository.update(draft.id, {
      ...(params.note !== undefined ? { note: params.note } : {}),
      ...(placement ? { position: placement.position, lineCode: placement.lineCode } : {}),
      updatedAt: new Date(),
    });
    return { items: [await repository.findOneByOrFail({ id: draft.id })], mergeRequest };
  }

  async remove(caller: Caller, view: ProjectView, iid: number, draftId: number): Promise<void> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const { affected } = await this.dataSource
      .getRepository(DraftNote)
      .delete({ id: draftId, mergeRequestId: mergeRequest.id, authorId: authorOf(caller) });
    if (!affected) throw recordNotFound();
  }

  /** One draft of the caller, published as `publishAll` publishes each. */
  async publish(caller: Caller, view: ProjectView, iid: number, draftId: number): Promise<void> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const draft = await this.find(caller, mergeRequest, draftId);
    const published = await this.publishDrafts(caller, view, mergeRequest, [draft]);
    // Published or deleted by another request meanwhile.
    if (published === 0) throw recordNotFound();
  }

  /** Every draft of the caller on the merge request, oldest first. */
  async publishAll(caller: Caller, view: ProjectView, iid: number): Promise<void> {
    const { items, mergeRequest } = await this.list(caller, view, iid);
    await this.publishDrafts(caller, view, mergeRequest, items);
  }

  /**
   * Checks every draft first (its thread still there, its position still on a version), reading outside any
   * transaction (PGlite has one session); then, in one transaction, claims the drafts by deleting them and
   * writes their notes through the notes service. A failure anywhere rolls it all back: nothing is
   * published and every draft stays. Answers how many drafts were claimed.
   */
  private async publishDrafts(
    caller: Caller,
    view: ProjectView,
    mergeRequest: MergeRequest,
    drafts: DraftNote[],
  ): Promise<number> {
    if (drafts.length === 0) return 0;
    const pending = new Map<number, PendingNote>();
    for (const draft of drafts)
      pending.set(draft.id, await this.pendingNote(caller, view, mergeRequest, draft));
    return this.dataSource.transaction(async (tx) => {
      // Locking them first claims them: a concurrent publication of the same drafts waits here, then
      // finds none.
      const repository = tx.getRepository(DraftNote);
      const locked = await repository.find({
        select: { id: true },
        where: { id: In([...pending.keys()]), authorId: authorOf(caller) },
        lock: { mode: 'pessimistic_write' },
      });
      const claimed = new Set(locked.map((row) => row.id));
      if (claimed.size > 0) await repository.delete({ id: In([...claimed]) });
      for (const draft of drafts)
        if (claimed.has(draft.id))
          await this.services.notes.writePending(caller, view, mergeRequest, pending.get(draft.id)!, tx);
      return claimed.size;
    });
  }

  /** What a draft publishes as, checked now: a reply to its thread, or a note or diff thread of its own. */
  private async pendingNote(
    caller: Caller,
    view: ProjectView,
    mergeRequest: MergeRequest,
    draft: DraftNote,
  ): Promise<PendingNote> {
    const body = draft.note;
    const resolve = draft.resolveDiscussion;
    if (draft.discussionId) {
      const thread = await this.services.notes.findThread(caller, view, mergeRequest, draft.discussionId);
      if (!thread) throw threadGone();
      return { body, commitId: null, thread, placement: null, resolve };
    }
    let placement: Placement | null = null;
    if (draft.position)
      placement = await this.services.notes.place(view, mergeRequest, storedInput(draft.position));
    return { body, commitId: draft.commitId, thread: null, placement, resolve };
  }

  /** The thread a draft answers: one of the merge request's, not a system note's. */
  private async replyTarget(
    caller: Caller,
    view: ProjectView,
    mergeRequest: MergeRequest,
    discussionId: string,
  ): Promise<Discussion> {
    const thread = await this.services.notes.findThread(caller, view, mergeRequest, discussionId);
    if (!thread) throw refused('Thread to reply to cannot be found');
    if (thread.notes.some((note) => note.system)) throw refused('Replies to system notes are not allowed');
    return thread;
  }

  /** The caller's own draft on the merge request; anyone else's is not found, as GitLab scopes the lookup. */
  private async find(caller: Caller, mergeRequest: MergeRequest, draftId: number): Promise<DraftNote> {
    const draft = await this.dataSource
      .getRepository(DraftNote)
      .findOneBy({ id: draftId, mergeRequestId: mergeRequest.id, authorId: authorOf(caller) });
    if (!draft) throw recordNotFound();
    return draft;
  }
}

/** Every draft note call is signed in (the contract admits no anonymous caller). */
function authorOf(caller: Caller): number {
  if (!caller.user) throw unauthorized();
  return caller.user.id;
}
