/**
 * GitLab's tag search, case-insensitive: `^term` a prefix, `term$` a suffix, both the whole name,
 * else a substring with an exact match moved first.
 */
export function searchTags(names: string[], search: string | undefined): string[] {
  if (!search) return names;
  const anchoredStart = search.startsWith('^');
  const anchoredEnd = search.length > (anchoredStart ? 1 : 0) && search.endsWith('$');
  const term = search.slice(anchoredStart ? 1 : 0, anchoredEnd ? -1 : undefined).toLowerCase();
  const matches = names.filter((name) => {
    const lower = name.toLowerCase();
    if (anchoredStart && anchoredEnd) return lower === term;
    if (anchoredStart) return lower.startsWith(term);
    if (anchoredEnd) return lower.endsWith(term);
    return lower.includes(term);
  });
  if (anchoredStart || anchoredEnd) return matches;
  const exact = matches.findIndex((name) => name.toLowerCase() === term);
  if (exact > 0) matches.unshift(...matches.splice(exact, 1));
  return matches;
}
