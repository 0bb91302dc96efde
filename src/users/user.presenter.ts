import type { components } from '../../generated/openapi.js';
import type { User } from './user.entity.js';

export type UserSummaryJson = components['schemas']['UserSummary'];

export const userWebUrl = (externalUrl: string, user: Pick<User, 'username'>) =>
  `${externalUrl}/${user.username}`;

/** The user summary embedded in other resources. */
export function presentUserSummary(user: User, externalUrl: string): UserSummaryJson {
  return {
    id: user.id,
    name: user.name,
    username: user.username,
    state: user.state,
    locked: false,
    avatar_url: null,
    web_url: userWebUrl(externalUrl, user),
  };
}
