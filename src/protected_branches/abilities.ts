import { defineAbilities, hasProjectLevel } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';

/** Protecting branches and tags (the protected tags family uses the same ability). */
export const protectedBranchesAbilities = defineAbilities({
  project: {
    admin_protected_branch: { minimum: AccessLevel.Maintainer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    protected_branches: typeof protectedBranchesAbilities;
  }
}

/** Deleting a protected branch or tag: Maintainer and above, or an administrator. */
export const canAdminProtectedRefs = (caller: Caller, accessLevel: number) =>
  hasProjectLevel(caller, 'admin_protected_branch', accessLevel);
