import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

export const remoteMirrorsAbilities = defineAbilities({
  project: {
    /** Managing and forcing push mirrors (GitLab's `admin_remote_mirror`). */
    admin_remote_mirror: { minimum: AccessLevel.Maintainer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    remote_mirrors: typeof remoteMirrorsAbilities;
  }
}
