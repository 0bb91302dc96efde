/** Durations as GitLab writes them (ChronicDuration): `1 week`, `3h 30m`, `90 minutes`, `45`. */
const UNITS: Array<[RegExp, number]> = [
  [/^(s|secs?|seconds?)$/, 1],
  [/^(m|mins?|minutes?)$/, 60],
  [/^(h|hrs?|hours?)$/, 3600],
  [/^(d|days?)$/, 86_400],
  [/^(w|wks?|weeks?)$/, 604_800],
  [/^(mo|mos|months?)$/, 2_592_000],
  [/^(y|yrs?|years?)$/, 31_536_000],
];

/** Seconds, or null when the text is not a duration. */
export function parseDuration(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : null;
  if (typeof value !== 'string') return null;
  const text = value
    .trim()
    .toLowerCase()
    .replace(/,|\band\b/g, ' ');
  if (text === '') return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const re = /(\d+(?:\.\d+)?)\s*([a-z]+)/g;
  let total = 0;
  let consumed = '';
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const unit = UNITS.find(([u]) => u.test(m?.[2] as string));
    if (!unit) return null;
    total += Number(m[1]) * unit[1];
    consumed += m[0];
  }
  return consumed.replace(/\s/g, '') === text.replace(/\s/g, '') ? total : null;
}

export const ONE_WEEK = 604_800;
export const ONE_MONTH = 2_592_000;
