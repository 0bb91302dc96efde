import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/** Feature flags and user lists: Developer and above read and manage them (GitLab's `*_feature_flag`). */
export const featureFlagsAbilities = defineAbilities({
  project: {
    read_feature_flag: { minimum: AccessLevel.Developer },
    admin_feature_flag: { minimum: AccessLevel.Developer },
    admin_feature_flags_user_lists: { minimum: AccessLevel.Developer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    feature_flags: typeof featureFlagsAbilities;
  }
}
