import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/**
 * Pipelines and jobs (GitLab's `*_pipeline` and `*_build`): Reporters read them, and anyone who sees a
 * public or internal project (its builds are public by default); Developers run and change them;
 * Owners delete pipelines.
 */
export const pipelinesAbilities = defineAbilities({
  project: {
    read_pipeline: { minimum: AccessLevel.Reporter, openWhenVisible: 'anyone' },
    create_pipeline: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
    update_pipeline: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
    destroy_pipeline: { minimum: AccessLevel.Owner },
    read_build: { minimum: AccessLevel.Reporter, openWhenVisible: 'anyone' },
    update_build: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    pipelines: typeof pipelinesAbilities;
  }
}
