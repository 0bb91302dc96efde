import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

export const accessTokensAbilities = defineAbilities({
  project: {
    admin_project_access_token: { minimum: AccessLevel.Maintainer },
  },
  group: {
    admin_group_access_token: { minimum: AccessLevel.Owner },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    access_tokens: typeof accessTokensAbilities;
  }
}
