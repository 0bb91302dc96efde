import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/** Who reads and manages the members of projects and groups. */
export const membersAbilities = defineAbilities({
  /** Finer rules (`x-forge-rule`) the family's services apply once the resource is found. */
  rules: {
    or_self: {
      summary: 'a member may remove themselves, with read_project or read_group',
      floor: { project: 'read_project', group: 'read_group' },
    },
    up_to_own_level: { summary: "no level above the caller's own may be given, unless by an administrator" },
  },
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
