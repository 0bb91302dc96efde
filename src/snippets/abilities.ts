import { defineAbilities, hasProjectLevel, isAdmin, isMemberLevel, Visibility } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';
import type { Caller } from '../core/auth.js';

export const snippetsAbilities = defineAbilities({
  /** Finer rules (`x-forge-rule`) the family's services apply once the resource is found. */
  rules: {
    or_snippet_author: {
      summary: "the snippet's author may too, with create_snippet",
      floor: { project: 'create_snippet' },
    },
    own_snippet: { summary: "only the snippet's author, or an administrator" },
  },
  project: {
    /** Project snippets: whoever sees the project; each snippet's visibility refines it (canReadSnippet). */
    read_snippet: { minimum: AccessLevel.NoAccess },
    /** Creating project snippets; editing and deleting them is for their author or Maintainer and above. */
    create_snippet: { minimum: AccessLevel.Reporter, refusedWhenArchived: true },
    admin_snippet: { minimum: AccessLevel.Maintainer, refusedWhenArchived: true },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    snippets: typeof snippetsAbilities;
  }
}

/**
 * Reading one snippet, its project (if any) already seen: administrators and its author always; public
 * ones anyone; internal ones signed-in users who are not external (and members of its project);
 * private ones its project's members, or for a personal snippet its author alone.
 */
export function canReadSnippet(
  caller: Caller,
  snippet: { visibilityLevel: number; authorId: number; projectId: number | null },
  projectAccessLevel: number,
): boolean {
  const user = caller.user;
  if (snippet.visibilityLevel >= Visibility.public) return true;
  if (!user) return false;
  if (user.admin || user.id === snippet.authorId) return true;
  const member = snippet.projectId !== null && isMemberLevel(projectAccessLevel);
  if (snippet.visibilityLevel >= Visibility.internal) return !user.external || member;
  return member;
}

/** Editing or deleting a snippet: its author, Maintainer and above of its project, or an administrator. */
export const canAdminSnippet = (
  caller: Caller,
  snippet: { authorId: number; projectId: number | null },
  projectAccessLevel: number,
) =>
  caller.user !== null &&
  (caller.user.id === snippet.authorId ||
    isAdmin(caller) ||
    (snippet.projectId !== null && hasProjectLevel(caller, 'admin_snippet', projectAccessLevel)));

/** A snippet's user agent details: administrators only. */
export const canReadUserAgentDetail = (caller: Caller) => isAdmin(caller);
