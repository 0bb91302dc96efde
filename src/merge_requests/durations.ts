/**
 * GitLab's time tracking durations: `1mo 2w 3d 4h 5m 6s`, with a month of 4 weeks, a week of 5 days
 * and a day of 8 hours (working time), written with or without spaces or in words.
 */
const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 8 * HOUR;
const WEEK = 5 * DAY;
const MONTH = 4 * WEEK;

const UNITS: Array<[RegExp, number]> = [
  [/^(mo|mos|month|months)$/, MONTH],
  [/^(w|wk|wks|week|weeks)$/, WEEK],
  [/^(d|day|days)$/, DAY],
  [/^(h|hr|hrs|hour|hours)$/, HOUR],
  [/^(m|min|mins|minute|minutes)$/, MINUTE],
  [/^(s|sec|secs|second|seconds)$/, 1],
];

const TERM = /(\d+(?:\.\d+)?)\s*([a-z]*)/g;

/** Seconds, or null when the text is not a duration. A bare number counts hours, as GitLab's parser does. */
export function parseDuration(text: string): number | null {
  const trimmed = text.trim().toLowerCase();
  const negative = trimmed.startsWith('-');
  const body = (negative ? trimmed.slice(1) : trimmed).replace(/,|\band\b/g, ' ').trim();
  if (body === '') return null;
  let seconds = 0;
  let consumed = '';
  for (const match of body.matchAll(TERM)) {
    const unit = match[2] === '' ? HOUR : UNITS.find(([pattern]) => pattern.test(match[2]))?.[1];
    if (unit === undefined) return null;
    seconds += Number(match[1]) * unit;
    consumed += match[0];
  }
  // Everything but spaces must have been read as terms.
  if (consumed.replace(/\s/g, '') !== body.replace(/\s/g, '')) return null;
  const rounded = Math.round(seconds);
  if (!Number.isSafeInteger(rounded) || rounded > 2147483647) return null;
  return negative ? -rounded : rounded;
}

/** GitLab's short human form (`1w 2d 3h 30m`), null for zero. */
export function humanDuration(seconds: number): string | null {
  if (seconds === 0) return null;
  const sign = seconds < 0 ? '-' : '';
  let left = Math.abs(seconds);
  const parts: string[] = [];
  for (const [size, unit] of [
    [MONTH, 'mo'],
    [WEEK, 'w'],
    [DAY, 'd'],
    [HOUR, 'h'],
    [MINUTE, 'm'],
    [1, 's'],
  ] as const) {
    const count = Math.floor(left / size);
    if (count > 0) parts.push(`${count}${unit}`);
    left -= count * size;
  }
  return sign + parts.join(' ');
}
