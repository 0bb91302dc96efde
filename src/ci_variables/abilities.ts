import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/**
 * Project and group CI/CD variables: Maintainers and above, and custom roles with
 * `admin_cicd_variables` (member_roles grants the ability of that name). Instance variables are the
 * administrators' (`admin_all_resources`).
 */
export const ciVariablesAbilities = defineAbilities({
  project: {
    admin_cicd_variables: { minimum: AccessLevel.Maintainer },
  },
  group: {
    admin_cicd_variables: { minimum: AccessLevel.Maintainer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    ci_variables: typeof ciVariablesAbilities;
  }
}
