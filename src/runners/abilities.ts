import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/**
 * Runners, as GitLab's project, group and runner policies have them: a project's Maintainers manage its
 * runners and registration token; a group's Maintainers see its runners and its Owners manage them.
 * What a caller may do to one runner (read, edit, delete, enable elsewhere) depends on the runner's
 * owner and projects: the rules below, applied by the service (runner-access.ts).
 */
export const runnersAbilities = defineAbilities({
  rules: {
    runner_creator: {
      summary:
        "an administrator for an instance runner, the group's Owner for a group runner, a Maintainer of the project for a project runner",
    },
    runner_access: {
      summary:
        "an administrator; for a group runner the group's Owner (its Maintainers read it); for a project runner a Maintainer of its owner project (Maintainers of its other projects read and edit it); any signed-in user reads an instance runner",
    },
    runner_assign: {
      summary: 'who may edit the runner, and it is not locked (administrators excepted)',
    },
  },
  project: {
    read_project_runners: { minimum: AccessLevel.Maintainer },
    create_runners: { minimum: AccessLevel.Maintainer },
    admin_runners: { minimum: AccessLevel.Maintainer },
    update_runners_registration_token: { minimum: AccessLevel.Maintainer },
  },
  group: {
    read_group_runners: { minimum: AccessLevel.Maintainer },
    create_runners: { minimum: AccessLevel.Owner },
    admin_runners: { minimum: AccessLevel.Owner },
    update_runners_registration_token: { minimum: AccessLevel.Owner },
  },
  // GitLab's custom-role flag `read_runners` opens the runner lists.
  grants: { read_runners: { project: ['read_project_runners'], group: ['read_group_runners'] } },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    runners: typeof runnersAbilities;
  }
}
