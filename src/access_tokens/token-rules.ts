/**
 * GitLab's rules for token values: scopes, expiry dates, record validation messages. Pure functions,
 * shared by every kind of token.
 */
import { TOKEN_SCOPES } from '../core/auth.js';
import { badParameter } from '../core/errors.js';

/** A token may live at most this long, counted from today. */
export const MAX_LIFETIME_DAYS = 365;
/** A rotated token's default lifetime. */
export const ROTATION_LIFETIME_DAYS = 7;

/** Admin-only scopes and `read_user` are not available to project and group bots. */
const NOT_FOR_BOTS = new Set<string>(['read_user', 'sudo', 'admin_mode', 'read_service_ping']);

export const PERSONAL_SCOPES: readonly string[] = TOKEN_SCOPES;
export const RESOURCE_SCOPES: readonly string[] = TOKEN_SCOPES.filter((scope) => !NOT_FOR_BOTS.has(scope));
/** `POST /user/personal_access_tokens` may only hand out these. */
export const SELF_SERVICE_SCOPES: readonly string[] = ['k8s_proxy', 'self_rotate'];

/** Today in UTC, as the authentication check counts expiry. */
export const utcToday = (now = new Date()): string => now.toISOString().slice(0, 10);

export function addDays(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return utcToday(date);
}

/** A token stops working at the start of its `expires_at` day. */
export const isActive = (token: { revoked: boolean; expiresAt: string | null }, today = utcToday()) =>
  !token.revoked && (token.expiresAt === null || token.expiresAt > today);

/**
 * Scopes as sent: an array, whose items may themselves be comma-separated (`scopes=api,read_api`), as
 * GitLab accepts. Any value outside `allowed` is a bad parameter, worded as Grape words it.
 */
export function parseScopes(raw: readonly string[], allowed: readonly string[]): string[] {
  const scopes = [...new Set(raw.flatMap((item) => item.split(',')).map((item) => item.trim()))].filter(
    Boolean,
  );
  if (scopes.some((scope) => !allowed.includes(scope)))
    throw badParameter('scopes does not have a valid value');
  return scopes;
}

/** The expiry must lie after today and within the maximum lifetime. */
export function expiryErrors(expiresAt: string, today = utcToday()): string[] {
  if (expiresAt <= today) return ['Expires at must be in the future'];
  const latest = addDays(today, MAX_LIFETIME_DAYS);
  if (expiresAt > latest) return [`Expires at must be before ${latest}`];
  return [];
}

export interface NewTokenAttributes {
  name: string;
  description?: string | null;
  scopes: string[];
  expiresAt: string;
}

/** The record validations of a new token, as GitLab's full messages. */
export function tokenErrors(attrs: NewTokenAttributes, today = utcToday()): string[] {
  const errors: string[] = [];
  if (!attrs.name.trim()) errors.push("Name can't be blank");
  else if (attrs.name.length > 255) errors.push('Name is too long (maximum is 255 characters)');
  if (attrs.scopes.length === 0) errors.push("Scopes can't be blank");
  if (attrs.description && attrs.description.length > 255)
    errors.push('Description is too long (maximum is 255 characters)');
  return [...errors, ...expiryErrors(attrs.expiresAt, today)];
}

/** Rails' `to_sentence`: "a", "a and b", "a, b, and c". */
export function toSentence(items: readonly string[]): string {
  if (items.length <= 2) return items.join(' and ');
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

/**
 * A time filter: ISO 8601 date or date-time; without a zone it is UTC. Returns an ISO timestamp, or
 * throws GitLab's 400 for a value that is no time at all.
 */
export function parseTimeFilter(name: string, value: string): string {
  let text = value.trim().replace(' ', 'T');
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) text += 'T00:00:00';
  const zone = /(Z|[+-]\d{2}(:?\d{2})?)$/.exec(text.slice(10));
  if (!zone) text += 'Z';
  else if (/^[+-]\d{2}$/.test(zone[0])) text += ':00';
  else if (/^[+-]\d{4}$/.test(zone[0])) text = `${text.slice(0, -2)}:${text.slice(-2)}`;
  const time = new Date(text);
  if (Number.isNaN(time.getTime())) throw badParameter(`${name} is invalid`);
  return time.toISOString();
}
