import { canProject, defineAbilities, isMemberLevel, type Subject } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';

export const mergeRequestApprovalsAbilities = defineAbilities({
  /** Finer rules (`x-forge-rule`) the family's services apply once the resource is found. */
  rules: {
    approval_eligibility: {
      summary: "the merge request's author and committers may not approve it, as the project's settings say",
    },
  },
  project: {
    /**
     * Approving merge requests: Developer and above (GitLab's `approve_merge_request`); a custom role's
     * `admin_merge_request` grants it. Eligibility (author, committers) is the service's.
     */
    approve_merge_request: { minimum: AccessLevel.Developer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    merge_request_approvals: typeof mergeRequestApprovalsAbilities;
  }
}

/** May the caller approve merge requests in the project (`approve_merge_request`)? */
export const canApproveMergeRequests = (caller: Caller, subject: Subject) =>
  caller.user !== null && canProject(caller, 'approve_merge_request', subject);

/** Resetting a merge request's approvals: the bot of a project or group access token, a member of the project. */
export const canResetApprovals = (caller: Caller, accessLevel: number) =>
  caller.user?.userType === 'project_bot' && isMemberLevel(accessLevel);
