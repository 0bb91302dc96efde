import type { components } from '../../generated/openapi.js';
import { ghost } from '../notes/note.presenter.js';
import { presentUserSummary } from '../users/user.presenter.js';
import type { AwardEmoji } from './award-emoji.entity.js';
import type { AwardRecords } from './award-emoji.service.js';

export type AwardEmojiJson = components['schemas']['AwardEmoji'];

export function presentAwardEmoji(
  award: AwardEmoji,
  records: Pick<AwardRecords, 'users'>,
  externalUrl: string,
): AwardEmojiJson {
  const user = award.userId === null ? undefined : records.users.get(award.userId);
  return {
    id: award.id,
    name: award.name,
    user: user ? presentUserSummary(user, externalUrl) : ghost(externalUrl),
    created_at: award.createdAt.toISOString(),
    updated_at: award.updatedAt.toISOString(),
    awardable_id: award.noteId ?? award.mergeRequestId,
    awardable_type: award.noteId === null ? 'MergeRequest' : 'Note',
    // Custom emoji have an image URL; the standard set has none.
    url: null,
  };
}
