import { defineAbilities, hasProjectLevel, PRIVATE_CONTENT_READER } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';

/** The projects family's abilities: the project itself, its settings, forks and statistics. */
export const projectsAbilities = defineAbilities({
  /** Finer rules (`x-forge-rule`) the family's services apply once the resource is found. */
  rules: {
    projects_limit: {
      summary: "the caller's projects limit, and a personal namespace (external users have none: 403)",
    },
    fork_namespace: { summary: 'the target namespace must take the fork (external users have none: 404)' },
  },
  project: {
    read_project: { minimum: AccessLevel.NoAccess },
    read_statistics: { minimum: AccessLevel.Reporter },
    /** Forking reads the code; the project's `forking_access_level` refines it (`canUseForking`). */
    fork_project: { minimum: PRIVATE_CONTENT_READER, openWhenVisible: 'anyone' },
    /** Removing the project's fork relation. */
    remove_fork_project: { minimum: AccessLevel.Owner },
    admin_project: { minimum: AccessLevel.Maintainer },
    share_project: { minimum: AccessLevel.Maintainer },
    archive_project: { minimum: AccessLevel.Owner },
    change_visibility_level: { minimum: AccessLevel.Owner },
    remove_project: { minimum: AccessLevel.Owner },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    projects: typeof projectsAbilities;
  }
}

/** Reporter and above, or an administrator. */
export const canReadStatistics = (caller: Caller, accessLevel: number) =>
  hasProjectLevel(caller, 'read_statistics', accessLevel);

/** Maintainer and above, or an administrator. */
export const canAdminProject = (caller: Caller, accessLevel: number) =>
  hasProjectLevel(caller, 'admin_project', accessLevel);
