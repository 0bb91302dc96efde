import { In, type DataSource } from 'typeorm';
import { canCommentWhenLocked, canReadInternalNotes } from '../notes/abilities.js';
import { canRemoveAward } from './abilities.js';
import type { Caller } from '../core/auth.js';
import { notFound, recordNotFound, unauthorized } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { offsetHeaders, perPageOf, type RequestInfo } from '../core/pagination.js';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.js';
import type { MergeRequest } from '../merge_requests/merge-request.entity.js';
import { Note } from '../notes/note.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { User } from '../users/user.entity.js';
import { AwardEmoji } from './award-emoji.entity.js';
import { isEmojiName } from './emoji-names.js';

type PageParams = { page?: number; per_page?: number };

/** What a reaction is on: a merge request, or one of its notes (`noteId`). */
export interface AwardableRef {
  iid: number;
  noteId?: number;
}

/** Reactions with the users who awarded them, loaded a page at a time. */
export interface AwardRecords {
  items: AwardEmoji[];
  users: Map<number, User>;
}

/** GitLab answers a refused or invalid award with 404 `Award Emoji <reason> Not Found`. */
const refused = (reason?: string) => notFound(reason ? `Award Emoji ${reason}` : 'Award Emoji');

export class AwardEmojiService {
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
    ref: AwardableRef,
    params: PageParams,
    request: RequestInfo,
  ): Promise<AwardRecords & { headers: Record<string, string> }> {
    const { mergeRequest, note } = await this.awardable(caller, view, ref);
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const [items, total] = await this.scope(mergeRequest, note)
      .orderBy('a.id', 'ASC')
      .skip((page - 1) * perPage)
      .take(perPage)
      .getManyAndCount();
    return { items, users: await this.users(items), headers: offsetHeaders(total, page, perPage, request) };
  }

  async get(caller: Caller, view: ProjectView, ref: AwardableRef, awardId: number): Promise<AwardRecords> {
    const { mergeRequest, note } = await this.awardable(caller, view, ref);
    const award = await this.find(mergeRequest, note, awardId);
    return { items: [award], users: await this.users([award]) };
  }

  async create(caller: Caller, view: ProjectView, ref: AwardableRef, name: string): Promise<AwardRecords> {
    const { mergeRequest, note } = await this.awardable(caller, view, ref);
    // GitLab's `award_emoji` ability: a locked discussion takes reactions from members only.
    if (mergeRequest.discussionLocked && !canCommentWhenLocked(caller, view.accessLevel)) throw refused();
    if (note?.system) throw refused('Awardable cannot be awarded emoji');
    if (!isEmojiName(name)) throw refused('Name is not a valid emoji name');
    const now = new Date();
    // The partial unique indexes decide a race between two identical awards. A reaction on a note bumps
    // the note's updated_at, as GitLab's does (Note#bump_updated_at).
    const award = await this.dataSource
      .transaction(async (tx) => {
        const repository = tx.getRepository(AwardEmoji);
        const inserted = await repository.insert({
          name,
          userId: caller.user?.id ?? null,
          mergeRequestId: mergeRequest.id,
          noteId: note?.id ?? null,
          createdAt: now,
          updatedAt: now,
        });
        if (note) await tx.getRepository(Note).update(note.id, { updatedAt: now });
        return repository.findOneByOrFail({ id: inserted.identifiers[0].id as number });
      })
      .catch((err: unknown) => {
        if (isUniqueViolation(err)) throw refused('Name has already been taken');
        // The merge request or note was deleted meanwhile.
        if (isForeignKeyViolation(err)) throw recordNotFound();
        throw err;
      });
    return { items: [award], users: await this.users([award]) };
  }

  /** Only the user who awarded it, or an administrator: GitLab answers anyone else 401. */
  async remove(caller: Caller, view: ProjectView, ref: AwardableRef, awardId: number): Promise<void> {
    const { mergeRequest, note } = await this.awardable(caller, view, ref);
    const award = await this.find(mergeRequest, note, awardId);
    if (!canRemoveAward(caller, award.userId)) throw unauthorized();
    await this.dataSource.transaction(async (tx) => {
      await tx.getRepository(AwardEmoji).delete(award.id);
      if (note) await tx.getRepository(Note).update(note.id, { updatedAt: new Date() });
    });
  }

  /** The merge request, and the note when the path names one (404 `Not found` for either missing). */
  private async awardable(
    caller: Caller,
    view: ProjectView,
    ref: AwardableRef,
  ): Promise<{ mergeRequest: MergeRequest; note: Note | null }> {
    const mergeRequest = await this.services.mergeRequests.find(view, ref.iid);
    if (ref.noteId === undefined) return { mergeRequest, note: null };
    const note = await this.dataSource
      .getRepository(Note)
      .findOneBy({ id: ref.noteId, noteableId: mergeRequest.id });
    if (!note || (note.internal && !canReadInternalNotes(caller, view.accessLevel))) throw recordNotFound();
    return { mergeRequest, note };
  }

  /** The reactions on exactly this awardable: the merge request's own, or the note's. */
  private scope(mergeRequest: MergeRequest, note: Note | null) {
    const query = this.dataSource
      .getRepository(AwardEmoji)
      .createQueryBuilder('a')
      .where('a.merge_request_id = :mergeRequestId', { mergeRequestId: mergeRequest.id });
    return note
      ? query.andWhere('a.note_id = :noteId', { noteId: note.id })
      : query.andWhere('a.note_id IS NULL');
  }

  private async find(mergeRequest: MergeRequest, note: Note | null, awardId: number): Promise<AwardEmoji> {
    const award = await this.scope(mergeRequest, note).andWhere('a.id = :awardId', { awardId }).getOne();
    if (!award) throw recordNotFound();
    return award;
  }

  private async users(awards: AwardEmoji[]): Promise<Map<number, User>> {
    const ids = [...new Set(awards.flatMap((award) => (award.userId === null ? [] : [award.userId])))];
    const users = new Map<number, User>();
    if (ids.length > 0)
      for (const user of await this.dataSource.getRepository(User).findBy({ id: In(ids) }))
        users.set(user.id, user);
    return users;
  }
}
