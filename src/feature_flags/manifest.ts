import type { CredentialResolver } from '../core/credentials.js';
import { featureFlagsAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { FeatureFlags1767745501000 } from './migrations/1767745501000-feature-flags.js';
import {
  FeatureFlag,
  FeatureFlagScope,
  FeatureFlagStrategy,
  FeatureFlagsClient,
  FeatureFlagUserList,
} from './feature-flag.entity.js';
import { featureFlagsHandlers } from './feature-flags.handlers.js';
import { FeatureFlagsService, type UnleashClient } from './feature-flags.service.js';
import { FeatureFlagUserListsService } from './user-lists.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    featureFlags: FeatureFlagsService;
    featureFlagUserLists: FeatureFlagUserListsService;
  }
}

declare module '../core/credentials.js' {
  interface PrincipalTypes {
    /** A project's Unleash instance id, in the `UNLEASH-INSTANCEID` header or the `instance_id` query. */
    UnleashInstanceId: UnleashClient;
    UnleashInstanceIdQuery: UnleashClient;
  }
}

/** An instance id holds for its own project only, named by the path's `project_id` (id or full path). */
const unleashClient =
  (featureFlags: FeatureFlagsService): CredentialResolver<UnleashClient> =>
  (instanceId, { path }) =>
    featureFlags.unleashClient(instanceId, path.project_id);

export const featureFlagsManifest = defineFamily({
  name: 'feature_flags',
  abilities: featureFlagsAbilities,
  entities: [FeatureFlagUserList, FeatureFlag, FeatureFlagStrategy, FeatureFlagScope, FeatureFlagsClient],
  migrations: [FeatureFlags1767745501000],
  services: [
    defineService('featureFlags', [], (core) => new FeatureFlagsService(core)),
    defineService('featureFlagUserLists', [], (core) => new FeatureFlagUserListsService(core)),
  ],
  credentials: {
    UnleashInstanceId: ({ featureFlags }) => unleashClient(featureFlags),
    UnleashInstanceIdQuery: ({ featureFlags }) => unleashClient(featureFlags),
  },
  handlers: featureFlagsHandlers,
});
