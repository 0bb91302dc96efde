/** The largest value of PostgreSQL's `integer`, the type of every id column; the contract's bound too. */
export const MAX_ID = 2_147_483_647;

/**
 * The id named by a path or `Sudo` value of digits, or undefined for anything else. Digits beyond the
 * column's range name no record: they give -1, which matches nothing, as Rails finds nothing for them.
 */
export function recordId(text: string): number | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const id = Number(text);
  return id <= MAX_ID ? id : -1;
}

/**
 * Ids given as a list (`ids[]=1&ids[]=2`), comma-separated (`ids=1,2`) or both: each as `recordId`
 * reads it; parts that are not ids are dropped.
 */
export function recordIds(values: ReadonlyArray<number | string> | string | undefined): number[] {
  const parts = (typeof values === 'string' ? [values] : (values ?? [])).flatMap((value) =>
    String(value).split(','),
  );
  return parts.map((part) => recordId(part.trim())).filter((id): id is number => id !== undefined);
}
