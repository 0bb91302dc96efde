/** Cron and time zone rules of pipeline schedules, on the maintained `cron-parser` (v4). */
import cronParser from 'cron-parser';

/** GitLab's words for a cron or a time zone it cannot read. */
export const INVALID_SYNTAX = 'syntax is invalid';

/** Whether the time zone is one the runtime knows (IANA names: `UTC`, `Europe/Paris`...). */
export function validTimezone(timezone: string): boolean {
  if (!timezone) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** Five fields (minute to weekday), or one of cron's `@` shorthands; cron-parser would also take seconds. */
export function validCron(cron: string): boolean {
  const fields = cron.trim().split(/\s+/);
  if (!(fields.length === 5 || (fields.length === 1 && fields[0].startsWith('@')))) return false;
  try {
    cronParser.parseExpression(cron, { tz: 'UTC' }).next();
    return true;
  } catch {
    return false;
  }
}

/** The first time after `from` the cron names, in the schedule's time zone. */
export function nextRunAt(cron: string, timezone: string, from: Date = new Date()): Date {
  return cronParser.parseExpression(cron, { tz: timezone, currentDate: from }).next().toDate();
}
