/**
 * GitLab's artifact durations (`expire_in`, parsed there by ChronicDuration): "30 days", "1 week",
 * "3 mins 4 sec", "2h20min", "1 day and 6 hours", a bare number of seconds, or "never".
 */
const SECOND = 1;
const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;
const WEEK = 7 * DAY;
const MONTH = 30 * DAY;
const YEAR = 365.25 * DAY;

const UNITS: ReadonlyArray<[RegExp, number]> = [
  [/^(s|secs?|seconds?)$/, SECOND],
  [/^(m|mins?|minutes?)$/, MINUTE],
  [/^(h|hrs?|hours?)$/, HOUR],
  [/^(d|days?)$/, DAY],
  [/^(w|wks?|weeks?)$/, WEEK],
  [/^(mos?|months?)$/, MONTH],
  [/^(y|yrs?|years?)$/, YEAR],
];

/** Seconds, null for "never", or undefined when the text is not a duration. */
export function parseExpireIn(text: string): number | null | undefined {
  const value = text.trim().toLowerCase();
  if (value === 'never') return null;
  if (/^\d+$/.test(value)) return Number(value);
  const cleaned = value.replace(/,/g, ' ').replace(/\band\b/g, ' ');
  const pattern = /(\d+(?:\.\d+)?)\s*([a-z]+)/g;
  let total = 0;
  let consumed = '';
  for (const match of cleaned.matchAll(pattern)) {
    const unit = UNITS.find(([re]) => re.test(match[2]));
    if (!unit) return undefined;
    total += Number(match[1]) * unit[1];
    consumed += match[0];
  }
  // Anything but amounts and units (and spaces) makes it no duration.
  if (!consumed || cleaned.replace(pattern, '').trim() !== '') return undefined;
  return Math.round(total);
}
