/** Escapes LIKE wildcards so that a user's search term matches literally. */
export const escapeLike = (term: string) => term.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A LIKE pattern matching values that contain `term` anywhere. */
export const containing = (term: string) => `%${escapeLike(term)}%`;
