import type { components } from '../../generated/openapi.js';
import type { PersonalAccessToken } from '../users/personal-access-token.entity.js';
import { isActive, utcToday } from './token-rules.js';

type Schemas = components['schemas'];
export type PersonalAccessTokenJson = Schemas['PersonalAccessToken'];
export type PersonalAccessTokenWithTokenJson = Schemas['PersonalAccessTokenWithToken'];
export type ResourceAccessTokenJson = Schemas['ResourceAccessToken'];
export type ResourceAccessTokenWithTokenJson = Schemas['ResourceAccessTokenWithToken'];
type AccessLevel = ResourceAccessTokenJson['access_level'];

/** A project or group token with its bot user's role in the project or group. */
export interface ResourceToken {
  token: PersonalAccessToken;
  accessLevel: number;
}

/** A token as just created or rotated, with the secret shown this once. */
export interface IssuedToken {
  token: PersonalAccessToken;
  secret: string;
}

export function presentPersonalAccessToken(
  token: PersonalAccessToken,
  today = utcToday(),
): PersonalAccessTokenJson {
  return {
    id: token.id,
    name: token.name,
    revoked: token.revoked,
    created_at: token.createdAt.toISOString(),
    description: token.description ?? null,
    scopes: token.scopes,
    user_id: token.userId,
    last_used_at: token.lastUsedAt ? token.lastUsedAt.toISOString() : null,
    active: isActive(token, today),
    expires_at: token.expiresAt ?? null,
  };
}

export const presentIssuedPersonalAccessToken = (issued: IssuedToken): PersonalAccessTokenWithTokenJson => ({
  ...presentPersonalAccessToken(issued.token),
  token: issued.secret,
});

export const presentResourceAccessToken = (
  { token, accessLevel }: ResourceToken,
  today = utcToday(),
): ResourceAccessTokenJson => ({
  ...presentPersonalAccessToken(token, today),
  access_level: accessLevel as AccessLevel,
});

export const presentIssuedResourceAccessToken = (
  issued: ResourceToken & { secret: string },
): ResourceAccessTokenWithTokenJson => ({
  ...presentResourceAccessToken(issued),
  token: issued.secret,
});
