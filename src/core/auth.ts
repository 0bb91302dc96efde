import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from './errors.js';
import { assertCleanString, decodeUtf8 } from './strings.js';

/** What core needs of a user and a token; the users family supplies the full types. */
export interface CallerUser {
  id: number;
  username: string;
  admin: boolean;
  external: boolean;
  state: string;
}
export interface CallerToken {
  id: number;
  scopes: string[];
}

/**
 * The identity types, added by the users family through declaration merging (`user`, `token`), so that
 * core names no family while services still see full entities.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Identity {}
type IdentityUser = Identity extends { user: infer U extends CallerUser } ? U : CallerUser;
type IdentityToken = Identity extends { token: infer T extends CallerToken } ? T : CallerToken;

/** Who is calling, resolved once per request. */
export interface Caller {
  user: IdentityUser | null;
  token: IdentityToken | null;
  /** The administrator acting as `user` through sudo. */
  sudoFrom?: IdentityUser;
  /**
   * A narrower reach than the user's own rights: a CI job token acts as its job's user, but only on its
   * own project and on the projects whose job token scope allows it.
   */
  reach?: CallerReach;
}

/** What a credential that acts for a user may reach (see `Caller.reach`). */
export interface CallerReach {
  /** The credential's kind, for logs and for answers that name it. */
  readonly kind: string;
  /** Throws GitLab's refusal unless the credential may act on this subject (of `subjectKind`). */
  check(subjectKind: string, subject: unknown): Promise<void>;
}

/** Turns presented credentials into a caller; the users family implements it. */
export interface Authenticator {
  /** A presented token must be known, unexpired, unrevoked and belong to an active user: otherwise 401. */
  authenticate(token: string | undefined): Promise<Caller>;
  /** Sudo: an administrator acting as the user with this id or username. */
  actAs(caller: Caller, identifier: string | undefined): Promise<Caller>;
}

export const anonymous: Caller = { user: null, token: null };

export const TOKEN_PREFIX = 'glpat-';

export function generateToken(prefix = TOKEN_PREFIX): string {
  return prefix + crypto.randomBytes(15).toString('base64url');
}

export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}

/** Every scope a token may carry, as GitLab defines them. */
export const TOKEN_SCOPES = [
  'api',
  'read_api',
  'read_user',
  'create_runner',
  'manage_runner',
  'k8s_proxy',
  'read_repository',
  'write_repository',
  'read_registry',
  'write_registry',
  'read_virtual_registry',
  'write_virtual_registry',
  'ai_features',
  'sudo',
  'admin_mode',
  'read_service_ping',
  'self_rotate',
] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

const INSUFFICIENT_SCOPE = 'The request requires higher privileges than provided by the access token.';

/** GitLab's OAuth-style refusal: 403 with `insufficient_scope` and the scopes that would do. */
export function insufficientScope(scopes: readonly string[]): ApiError {
  const scope = scopes.join(' ');
  return new ApiError(
    403,
    { error: 'insufficient_scope', error_description: INSUFFICIENT_SCOPE, scope },
    {
      'WWW-Authenticate': `Bearer realm="Protected by OAuth 2", error="insufficient_scope", error_description="${INSUFFICIENT_SCOPE}", scope="${scope}"`,
    },
  );
}

/**
 * A token must carry one of `scopes` (`*`: any scope will do); callers without a token (anonymous) have
 * nothing to check.
 */
export function requireScope(caller: Caller, scopes: readonly string[]): void {
  const token = caller.token;
  if (!token || scopes.includes('*')) return;
  if (!scopes.some((scope) => token.scopes.includes(scope))) throw insufficientScope(scopes);
}

/** The token from PRIVATE-TOKEN, `Authorization: Bearer`, or `private_token` in the query. */
export function presentedToken(
  headers: IncomingHttpHeaders,
  query: Array<[string, string]>,
): string | undefined {
  const header = headers['private-token'];
  if (typeof header === 'string' && header) return header.trim();
  const authorization = headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (match) return match[1];
  }
  return query.find(([key]) => key === 'private_token')?.[1] || undefined;
}

/** HTTP Basic with any user name and a token as the password, as GitLab takes it from git clients. */
export function basicAuthToken(headers: IncomingHttpHeaders): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(headers.authorization ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}

/** The `sudo` query parameter or `Sudo` header: a user id or username. */
export function sudoIdentifier(
  headers: IncomingHttpHeaders,
  query: Array<[string, string]>,
): string | undefined {
  const header = headers.sudo;
  // Header values arrive as latin1: read back as UTF-8 so a malformed one is refused like a parameter.
  if (typeof header === 'string' && header.trim())
    return assertCleanString(decodeUtf8(Buffer.from(header.trim(), 'latin1')));
  return query.find(([key]) => key === 'sudo')?.[1]?.trim() || undefined;
}
