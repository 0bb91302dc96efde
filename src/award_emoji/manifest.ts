import { awardEmojiAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { AwardEmoji1767744000000 } from './migrations/1767744000000-award-emoji.js';
import { AwardEmoji } from './award-emoji.entity.js';
import { awardEmojiHandlers } from './award-emoji.handlers.js';
import { AwardEmojiService } from './award-emoji.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    awardEmoji: AwardEmojiService;
  }
}

export const awardEmojiManifest = defineFamily({
  name: 'award_emoji',
  abilities: awardEmojiAbilities,
  entities: [AwardEmoji],
  migrations: [AwardEmoji1767744000000],
  services: [
    defineService('awardEmoji', ['mergeRequests'], (core, deps) => new AwardEmojiService(core, deps)),
  ],
  handlers: awardEmojiHandlers,
});
