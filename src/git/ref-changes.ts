/** Ref changes as git reports them to its hooks, and GitLab's wildcard ref patterns. */

/** The object id git gives the missing side of a created or deleted ref. */
export const ZERO_SHA = '0000000000000000000000000000000000000000';

export interface RefChange {
  ref: string;
  oldSha: string;
  newSha: string;
  /** The new commit does not descend from the old one. */
  forced?: boolean;
  /** Paths the update changes, when the pre-receive hook read them (its objects are quarantined). */
  paths?: string[];
}

const escapeRegex = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

/** GitLab's wildcards: `*` matches any run of characters, `/` included. */
export function refPatternMatches(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  return new RegExp(`^${pattern.split('*').map(escapeRegex).join('.*')}$`).test(name);
}
