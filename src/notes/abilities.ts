import { defineAbilities, hasProjectLevel, isAdmin, isMemberLevel } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';

export const notesAbilities = defineAbilities({
  /** Finer rules (`x-forge-rule`) the family's services apply once the resource is found. */
  rules: {
    or_note_author: {
      summary: "the note's author may too, with read_merge_request",
      floor: { project: 'read_merge_request' },
    },
    note_author_only: { summary: "only the note's author, administrators included" },
  },
  project: {
    /** Commenting on what the caller may read (merge requests): signed-in users, as reading allows. */
    create_note: { minimum: AccessLevel.Reporter, openWhenVisible: 'anyone' },
    /** Writing and reading internal notes. */
    read_internal_note: { minimum: AccessLevel.Reporter },
    /** Resolving threads, beyond the merge request's author (GitLab's `resolve_note`). */
    resolve_note: { minimum: AccessLevel.Developer },
    /** Deleting others' notes (GitLab's `admin_note` beyond a note's author). */
    admin_note: { minimum: AccessLevel.Maintainer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    notes: typeof notesAbilities;
  }
}

/**
 * Commenting on a merge request whose discussion is locked: project members only (any role), or an
 * administrator, as GitLab's lock allows.
 */
export const canCommentWhenLocked = (caller: Caller, accessLevel: number) =>
  caller.user !== null && (isAdmin(caller) || isMemberLevel(accessLevel));

/** Internal notes: Reporter and above, or an administrator. */
export const canReadInternalNotes = (caller: Caller, accessLevel: number) =>
  hasProjectLevel(caller, 'read_internal_note', accessLevel);

/** Editing a note: its author only. */
export const canEditNote = (caller: Caller, authorId: number | null) =>
  caller.user !== null && caller.user.id === authorId;

/** Deleting a note: its author, or Maintainer and above, or an administrator. */
export const canDeleteNote = (caller: Caller, accessLevel: number, authorId: number | null) =>
  canEditNote(caller, authorId) ||
  (caller.user !== null && hasProjectLevel(caller, 'admin_note', accessLevel));

/** Resolving a thread: the merge request's author, or Developer and above, or an administrator. */
export const canResolveDiscussion = (
  caller: Caller,
  accessLevel: number,
  mergeRequestAuthorId: number | null,
) =>
  caller.user !== null &&
  (caller.user.id === mergeRequestAuthorId || hasProjectLevel(caller, 'resolve_note', accessLevel));
