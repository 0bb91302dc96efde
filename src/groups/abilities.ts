import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

export const groupsAbilities = defineAbilities({
  group: {
    read_group: { minimum: AccessLevel.NoAccess },
    /** Subgroups and projects: the group's creation levels refine these (see groups service). */
    create_subgroup: { minimum: AccessLevel.Maintainer },
    create_projects: { minimum: AccessLevel.Developer },
    admin_group: { minimum: AccessLevel.Owner },
    remove_group: { minimum: AccessLevel.Owner },
  },
  instance: {
    /** Administrators, and users who may create groups (not external); `can_create_group` is the service's. */
    create_group: {
      admits: (who) => who.admin || (who.signedIn && !who.external && who.canCreateGroup !== false),
    },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    groups: typeof groupsAbilities;
  }
}
