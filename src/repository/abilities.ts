import { defineAbilities, hasProjectLevel, PRIVATE_CONTENT_READER } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';

/** Reading and pushing a project's code, whichever family serves it (files, commits, branches, tags). */
export const repositoryAbilities = defineAbilities({
  project: {
    /** Public and internal code is readable by whoever may see the project; private code needs Reporter. */
    read_code: { minimum: PRIVATE_CONTENT_READER, openWhenVisible: 'anyone' },
    push_code: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    repository: typeof repositoryAbilities;
  }
}

/** Pushing code (and merging into an unprotected branch): Developer and above, or an administrator. */
export const canPushCode = (caller: Caller, accessLevel: number) =>
  caller.user !== null && hasProjectLevel(caller, 'push_code', accessLevel);
