import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/**
 * Environments and deployments (GitLab's ProjectPolicy): Reporters read them; Developers create, update,
 * stop and delete environments and create and update deployments; Maintainers delete deployments.
 */
export const environmentsAbilities = defineAbilities({
  project: {
    read_environment: { minimum: AccessLevel.Reporter },
    create_environment: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
    update_environment: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
    stop_environment: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
    destroy_environment: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
    read_deployment: { minimum: AccessLevel.Reporter },
    create_deployment: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
    update_deployment: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
    destroy_deployment: { minimum: AccessLevel.Maintainer, refusedWhenArchived: true },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    environments: typeof environmentsAbilities;
  }
}
