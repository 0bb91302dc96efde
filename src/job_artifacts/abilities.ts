import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/**
 * Job artifacts: read as the jobs are (`read_build`), kept by Developers (`update_build`), deleted by
 * Maintainers (GitLab's `destroy_artifacts`).
 */
export const jobArtifactsAbilities = defineAbilities({
  project: {
    destroy_artifacts: { minimum: AccessLevel.Maintainer, refusedWhenArchived: true },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    job_artifacts: typeof jobArtifactsAbilities;
  }
}
