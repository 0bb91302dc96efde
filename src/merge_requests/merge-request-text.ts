/** What GitLab reads out of a merge request's title and description. */

/** `Draft:`, `[Draft]`, `(Draft)` or `Draft - ` at the start of the title, in any case, as GitLab recognises. */
const DRAFT_PREFIX = /^\s*(?:\[draft\]|\(draft\)|draft:|draft\s-\s)/i;

export const isDraftTitle = (title: string) => DRAFT_PREFIX.test(title);

/** The title without its draft prefix: marking draft or ready is not a title change. */
export const stripDraft = (title: string) => title.replace(DRAFT_PREFIX, '').trim();

/** Task list items: `- [ ]`, `* [x]`, `+ [X]`, `1. [ ]` at the start of a line. */
const TASK = /^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\[([ xX])\](?=[ \t]|$)/gm;

export function taskCompletion(description: string | null): { count: number; completed_count: number } {
  let count = 0;
  let completed = 0;
  for (const match of (description ?? '').matchAll(TASK)) {
    count++;
    if (match[1] !== ' ') completed++;
  }
  return { count, completed_count: completed };
}
