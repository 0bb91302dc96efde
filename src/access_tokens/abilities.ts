import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

export const accessTokensAbilities = defineAbilities({
  /** Finer rules (`x-forge-rule`) the family's services apply once the resource is found. */
  rules: {
    own_token: { summary: "the caller's own tokens; an administrator's any (another's answers 401)" },
    bots_only: { summary: 'only the bot user of a project or group access token' },
  },
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
