import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/** The job token scope: Maintainer and above read and change it (GitLab's `admin_project`). */
export const runnerJobsAbilities = defineAbilities({
  project: {
    admin_job_token_scope: { minimum: AccessLevel.Maintainer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    runner_jobs: typeof runnerJobsAbilities;
  }
}
