import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { DataSource } from 'typeorm';
import { PersonalAccessToken } from '../users/personal-access-token.entity.js';
import { User } from '../users/user.entity.js';
import { ApiError, forbidden, notFound, unauthorized } from './errors.js';

/** Who is calling, resolved once per request. */
export interface Caller {
  user: User | null;
  token: PersonalAccessToken | null;
  /** The administrator acting as `user` through sudo. */
  sudoFrom?: User;
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

/** A presented token must be known, unexpired, unrevoked and belong to an active user: otherwise 401. */
export async function authenticate(dataSource: DataSource, token: string | undefined): Promise<Caller> {
  if (!token) return anonymous;
  const record = await dataSource.getRepository(PersonalAccessToken).findOne({
    where: { tokenDigest: hashToken(token) },
    relations: { user: true },
  });
  const today = new Date().toISOString().slice(0, 10);
  if (!record?.user || record.revoked || (record.expiresAt !== null && record.expiresAt <= today))
    throw unauthorized();
  if (record.user.state !== 'active') throw unauthorized();
  await dataSource.query(
    `UPDATE personal_access_tokens SET last_used_at = now()
     WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '10 minutes')`,
    [record.id],
  );
  return { user: record.user, token: record };
}

/** The `sudo` query parameter or `Sudo` header: a user id or username. */
export function sudoIdentifier(
  headers: IncomingHttpHeaders,
  query: Array<[string, string]>,
): string | undefined {
  const header = headers.sudo;
  if (typeof header === 'string' && header.trim()) return header.trim();
  return query.find(([key]) => key === 'sudo')?.[1]?.trim() || undefined;
}

/**
 * Administrators act as another user with sudo, from a token that has the `sudo` scope. The target
 * is found by id or username; from then on the request is that user's, with the admin's token scopes.
 */
export async function applySudo(
  dataSource: DataSource,
  caller: Caller,
  identifier: string | undefined,
): Promise<Caller> {
  if (!identifier) return caller;
  if (!caller.user || !caller.token) throw unauthorized();
  if (!caller.user.admin) throw forbidden('Must be admin to use sudo');
  requireScope(caller, ['sudo']);
  const users = dataSource.getRepository(User);
  const target = /^\d+$/.test(identifier)
    ? await users.findOne({ where: { id: Number(identifier) } })
    : await users
        .createQueryBuilder('u')
        .where('lower(u.username) = lower(:username)', { username: identifier })
        .getOne();
  if (!target) throw notFound(`User with ID or username '${identifier}'`);
  if (target.state !== 'active') throw forbidden('The user you are trying to act as is blocked');
  return { user: target, token: caller.token, sudoFrom: caller.user };
}
