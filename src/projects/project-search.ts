/** Project search and its `similarity` order, shared by the project lists and a group's projects. */
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { containing, escapeLike } from '../core/search.js';

/**
 * Each word of `search` must appear in the path, name or description (or the namespace's full path);
 * returns the words.
 */
export function whereProjectMatches<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  search: string | undefined,
  withNamespaces = false,
): string[] {
  const terms = (search ?? '').split(/\s+/).filter(Boolean);
  const fields = ['p.path', 'p.name', 'p.description', ...(withNamespaces ? ['n.full_path'] : [])];
  terms.forEach((term, index) => {
    query.andWhere(`(${fields.map((f) => `${f} ILIKE :term${index}`).join(' OR ')})`, {
      [`term${index}`]: containing(term),
    });
  });
  return terms;
}

/** GitLab's `similarity` order: an exact path first, then names starting with the term, then the rest. */
export function orderBySimilarity<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  search: string,
  direction: 'ASC' | 'DESC',
): SelectQueryBuilder<T> {
  const term = search.trim().toLowerCase();
  return query
    .addSelect(
      `CASE WHEN lower(p.path) = :simExact THEN 3 WHEN lower(p.name) LIKE :simPrefix THEN 2 ELSE 1 END`,
      'similarity',
    )
    .setParameters({ simExact: term, simPrefix: `${escapeLike(term)}%` })
    .orderBy('similarity', direction);
}
