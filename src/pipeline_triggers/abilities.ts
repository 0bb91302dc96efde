import { defineAbilities, hasProjectLevel } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';

/**
 * Trigger tokens: Maintainer and above list, read, create and delete them (GitLab's `admin_build` and
 * `manage_trigger`); only a token's owner edits it (`admin_trigger`).
 */
export const pipelineTriggersAbilities = defineAbilities({
  rules: {
    trigger_owner_only: { summary: "only the token's owner, with manage_trigger" },
  },
  project: {
    manage_trigger: { minimum: AccessLevel.Maintainer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    pipeline_triggers: typeof pipelineTriggersAbilities;
  }
}

/** GitLab's `admin_trigger`: the owner, while they keep `manage_trigger` on the project. */
export const canAdminTrigger = (caller: Caller, accessLevel: number, ownerId: number | null) =>
  caller.user !== null &&
  caller.user.id === ownerId &&
  hasProjectLevel(caller, 'manage_trigger', accessLevel);
