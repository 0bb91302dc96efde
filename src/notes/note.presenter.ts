import type { components } from '../../generated/openapi.js';
import type { User } from '../users/user.entity.js';
import { presentUserSummary, type UserSummaryJson } from '../users/user.presenter.js';
import type { DiffPosition, Note } from './note.entity.js';
import { isResolvable, type DiscussionRecords, type NoteRecords } from './notes.service.js';

export type NoteJson = components['schemas']['Note'];
export type DiscussionJson = components['schemas']['Discussion'];

/** Who a note whose author was deleted belongs to, as GitLab's ghost user. */
export function ghost(externalUrl: string): UserSummaryJson {
  return {
    id: 0,
    name: 'Ghost User',
    username: 'ghost',
    state: 'active',
    locked: false,
    avatar_url: null,
    web_url: `${externalUrl}/ghost`,
  };
}

const summary = (users: Map<number, User>, id: number | null, externalUrl: string) => {
  const user = id === null ? undefined : users.get(id);
  return user ? presentUserSummary(user, externalUrl) : null;
};

/** The fields GitLab returns for each type of position; a text one's range is null unless it spans lines. */
export const presentPosition = (position: DiffPosition): NonNullable<NoteJson['position']> =>
  position.position_type === 'text'
    ? { ...position, line_range: position.line_range ?? null }
    : { ...position };

export function presentNote(
  note: Note,
  records: Pick<NoteRecords, 'mergeRequest' | 'users'>,
  externalUrl: string,
): NoteJson {
  const resolvable = isResolvable(note);
  return {
    id: note.id,
    type: note.type,
    body: note.body,
    attachment: null,
    author: summary(records.users, note.authorId, externalUrl) ?? ghost(externalUrl),
    created_at: note.createdAt.toISOString(),
    updated_at: note.updatedAt.toISOString(),
    system: note.system,
    noteable_id: note.noteableId,
    noteable_type: note.noteableType,
    noteable_iid: records.mergeRequest.iid,
    project_id: note.projectId,
    resolvable,
    ...(resolvable
      ? {
          resolved: note.resolvedAt !== null,
          resolved_by: summary(records.users, note.resolvedById, externalUrl),
          resolved_at: note.resolvedAt?.toISOString() ?? null,
        }
      : {}),
    confidential: note.internal,
    internal: note.internal,
    imported: false,
    imported_from: 'none',
    commands_changes: {},
    ...(note.type === 'DiffNote' ? { commit_id: note.commitId } : {}),
    ...(note.type === 'DiffNote' && note.position ? { position: presentPosition(note.position) } : {}),
  };
}

export function presentDiscussion(
  discussion: DiscussionRecords['discussions'][number],
  records: DiscussionRecords,
  externalUrl: string,
): DiscussionJson {
  return {
    id: discussion.id,
    individual_note: discussion.notes.length === 1 && discussion.notes[0].type === null,
    notes: discussion.notes.map((note) => presentNote(note, records, externalUrl)),
  };
}
