import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/** Who reads and manages the members of projects and groups. */
export const membersAbilities = defineAbilities({
  project: {
    read_project_member: { minimum: AccessLevel.NoAccess },
    admin_project_member: { minimum: AccessLevel.Maintainer },
    /** Giving, changing or taking the Owner role in a project. */
    manage_owners: { minimum: AccessLevel.Owner },
  },
  group: {
    read_group_member: { minimum: AccessLevel.NoAccess },
    admin_group_member: { minimum: AccessLevel.Owner },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    members: typeof membersAbilities;
  }
}
