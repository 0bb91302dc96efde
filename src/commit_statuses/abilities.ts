import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

export const commitStatusesAbilities = defineAbilities({
  project: {
    /** Posting a status on a commit (GitLab's `create_commit_status` / `update_commit_status`). */
    create_commit_status: { minimum: AccessLevel.Developer },
    /** Reading a commit's statuses; on public and internal projects whoever is signed in (public jobs). */
    read_commit_status: { minimum: AccessLevel.Reporter, openWhenVisible: 'signed_in' },
  },
  rules: {
    push_to_status_ref: {
      summary:
        "a status on a protected branch also needs the right to push or merge to it (GitLab's update_pipeline)",
    },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    commit_statuses: typeof commitStatusesAbilities;
  }
}
