import { defineAbilities, isAdmin } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';

export const awardEmojiAbilities = defineAbilities({
  /** Finer rules (`x-forge-rule`) the family's services apply once the resource is found. */
  rules: {
    awarder_only: { summary: 'only the user who awarded the emoji, or an administrator' },
  },
  project: {
    /** Reacting with emoji: as commenting (GitLab enables `award_emoji` with `create_note`). */
    award_emoji: { minimum: AccessLevel.Reporter, openWhenVisible: 'anyone' },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    award_emoji: typeof awardEmojiAbilities;
  }
}

/** Removing an emoji reaction: the user who awarded it, or an administrator. */
export const canRemoveAward = (caller: Caller, awarderId: number | null) =>
  caller.user !== null && (caller.user.id === awarderId || isAdmin(caller));
