import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { DataSource } from 'typeorm';
import { PersonalAccessToken } from '../users/personal-access-token.entity.js';
import type { User } from '../users/user.entity.js';
import { unauthorized } from './errors.js';

/** Who is calling, resolved once per request. */
export interface Caller {
  user: User | null;
  token: PersonalAccessToken | null;
}

export const anonymous: Caller = { user: null, token: null };

export const TOKEN_PREFIX = 'glpat-';

export function generateToken(prefix = TOKEN_PREFIX): string {
  return prefix + crypto.randomBytes(15).toString('base64url');
}

export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
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
