/**
 * GitLab's record validations for users, with its messages. Each check returns the attribute's
 * messages (empty when valid) so that a request gets every problem at once.
 */

/** Paths GitLab routes at the top level: no user (and so no personal namespace) may take them. */
const RESERVED_USERNAMES = new Set([
  '-',
  '.well-known',
  '404.html',
  '422.html',
  '500.html',
  '502.html',
  '503.html',
  'admin',
  'api',
  'apple-touch-icon.png',
  'assets',
  'dashboard',
  'explore',
  'favicon.ico',
  'favicon.png',
  'files',
  'groups',
  'health_check',
  'help',
  'import',
  'jwt',
  'login',
  'oauth',
  'profile',
  'projects',
  'public',
  'robots.txt',
  's',
  'search',
  'sitemap',
  'sitemap.xml',
  'sitemap.xml.gz',
  'slash-command-logo.png',
  'snippets',
  'unsubscribes',
  'uploads',
  'users',
  'v2',
]);

/** Endings a browser would take for a file type, which GitLab refuses at the end of a username. */
const RESERVED_EXTENSIONS = /\.(json|xml|html|rss|js|css|txt|csv|png|jpe?g|gif|svg|ico|zip|pdf)$/i;

const NAMESPACE_PATH = /^(?:[a-zA-Z0-9_.][a-zA-Z0-9_.-]*[a-zA-Z0-9_-]|[a-zA-Z0-9_])$/;
export const USERNAME_FORMAT_MESSAGE =
  "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.";

/** Devise's address check: something, one `@`, something, no spaces. */
const EMAIL = /^[^@\s]+@[^@\s]+$/;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;
const MAX_INT = 2147483647;

const tooLong = (max: number) => `is too long (maximum is ${max} characters)`;
const tooShort = (min: number) => `is too short (minimum is ${min} characters)`;

export function usernameErrors(username: string): string[] {
  if (username.trim() === '') return ["can't be blank"];
  const errors: string[] = [];
  if (username.length < 2) errors.push(tooShort(2));
  if (username.length > 255) errors.push(tooLong(255));
  if (RESERVED_USERNAMES.has(username.toLowerCase())) errors.push(`${username} is a reserved name`);
  if (!NAMESPACE_PATH.test(username) || /\.(git|atom)$/i.test(username)) errors.push(USERNAME_FORMAT_MESSAGE);
  else if (RESERVED_EXTENSIONS.test(username))
    errors.push('ending with a reserved file extension is not allowed.');
  return errors;
}

export function nameErrors(name: string): string[] {
  if (name.trim() === '') return ["can't be blank"];
  return name.length > 255 ? [tooLong(255)] : [];
}

export function emailErrors(email: string): string[] {
  if (email.trim() === '') return ["can't be blank"];
  return EMAIL.test(email) ? [] : ['is invalid'];
}

export function passwordErrors(password: string | undefined): string[] {
  if (!password) return ["can't be blank"];
  if (password.length < PASSWORD_MIN) return [tooShort(PASSWORD_MIN)];
  if (password.length > PASSWORD_MAX) return [tooLong(PASSWORD_MAX)];
  return [];
}

export function projectsLimitErrors(limit: number): string[] {
  if (limit < 0) return ['must be greater than or equal to 0'];
  if (limit > MAX_INT) return [`must be less than or equal to ${MAX_INT}`];
  return [];
}

/** The profile's free-text fields and their maximum lengths. */
export const PROFILE_LIMITS = {
  bio: 255,
  location: 255,
  website_url: 255,
  organization: 500,
  job_title: 200,
  pronouns: 50,
  linkedin: 500,
  twitter: 500,
  discord: 500,
  skype: 500,
} as const;
export type ProfileField = keyof typeof PROFILE_LIMITS;
export const PROFILE_FIELDS = Object.keys(PROFILE_LIMITS) as ProfileField[];

export function profileFieldErrors(field: ProfileField, value: string): string[] {
  return value.length > PROFILE_LIMITS[field] ? [tooLong(PROFILE_LIMITS[field])] : [];
}

/** The public email must be one the user owns; forge-api knows only the primary one. */
export function publicEmailErrors(publicEmail: string | null | undefined, email: string): string[] {
  if (!publicEmail) return [];
  return publicEmail.toLowerCase() === email.toLowerCase() ? [] : ['is not an email you own'];
}
