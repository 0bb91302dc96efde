import { defineAbilities, hasProjectLevel, PRIVATE_CONTENT_READER } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';

export const mergeRequestsAbilities = defineAbilities({
  /** Finer rules (`x-forge-rule`) the family's services apply once the resource is found. */
  rules: {
    or_merge_request_author: {
      summary: "the merge request's author may too, with read_merge_request",
      floor: { project: 'read_merge_request' },
    },
    or_auto_merge_setter: {
      summary: 'whoever set the automatic merge may cancel it too, with read_merge_request',
      floor: { project: 'read_merge_request' },
    },
  },
  project: {
    /**
     * Being the target of a merge request (`can_create_merge_request_in`): GitLab's guest access with
     * download rights, so whoever reads a public or internal project's code, or Reporter and above.
     */
    create_merge_request_in: {
      minimum: AccessLevel.Reporter,
      openWhenVisible: 'signed_in',
      refusedWhenArchived: true,
    },
    /** Opening a merge request from the project's branches (GitLab's `create_merge_request_from`). */
    create_merge_request_from: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
    /** Reading merge requests: like code, open to whoever sees a public or internal project. */
    read_merge_request: { minimum: PRIVATE_CONTENT_READER, openWhenVisible: 'anyone' },
    /** Time tracking and the other changes GitLab's `admin_merge_request` covers. */
    admin_merge_request: { minimum: AccessLevel.Developer },
    /** Editing a merge request beyond its author (GitLab's `update_merge_request`); no custom role grants it. */
    update_merge_request: { minimum: AccessLevel.Developer },
    destroy_merge_request: { minimum: AccessLevel.Owner },
    /** Merging: Developer and above; the target branch's protection refines it (merge levels). */
    merge_merge_request: { minimum: AccessLevel.Developer, refusedWhenArchived: true },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    merge_requests: typeof mergeRequestsAbilities;
  }
}

export const canCreateMergeRequestIn = (caller: Caller, accessLevel: number) =>
  hasProjectLevel(caller, 'create_merge_request_in', accessLevel);

/** Editing a merge request: its author, or Developer and above (GitLab's `update_merge_request`). */
export const canUpdateMergeRequest = (caller: Caller, accessLevel: number, authorId: number | null) =>
  (caller.user !== null && caller.user.id === authorId) ||
  hasProjectLevel(caller, 'admin_merge_request', accessLevel);

/** Asking for a merge status recheck: Developer and above (`restrict_merge_status_recheck`). */
export const canRecheckMergeStatus = (caller: Caller, accessLevel: number) =>
  hasProjectLevel(caller, 'admin_merge_request', accessLevel);
