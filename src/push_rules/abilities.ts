import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

export const pushRulesAbilities = defineAbilities({
  project: {
    admin_push_rules: { minimum: AccessLevel.Maintainer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    push_rules: typeof pushRulesAbilities;
  }
}
