import type { components } from '../../generated/openapi.js';
import type { Contributor } from './repository.service.js';

export type ContributorJson = components['schemas']['Contributor'];

/** GitLab never computes `additions` and `deletions`: they are always 0. */
export const presentContributor = (contributor: Contributor): ContributorJson => ({
  name: contributor.name,
  email: contributor.email,
  commits: contributor.commits,
  additions: 0,
  deletions: 0,
});
