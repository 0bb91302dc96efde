import { defineAbilities, hasProjectLevel } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';

/** Protecting branches and tags (the protected tags family uses the same ability). */
export const protectedBranchesAbilities = defineAbilities({
  /** Finer rules (`x-forge-rule`) the family's services apply once the resource is found. */
  rules: {
    can_push_to_branch: {
      summary:
        "the branch decides (GitLab's can_push_to_branch?): protected branches need their push level, and a collaborator on a merge request from a fork may push to its source branch, with read_code",
      floor: { project: 'read_code' },
    },
    protected_ref: { summary: 'a protected branch or tag needs the level its protection gives' },
    protected_tag: {
      summary: 'a protected tag needs Maintainer; checked once the tag is found, with read_code',
      floor: { project: 'read_code' },
    },
  },
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
