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
import { FeatureFlagsService } from './feature-flags.service.js';
import { FeatureFlagUserListsService } from './user-lists.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    featureFlags: FeatureFlagsService;
    featureFlagUserLists: FeatureFlagUserListsService;
  }
}

export const featureFlagsManifest = defineFamily({
  name: 'feature_flags',
  entities: [FeatureFlagUserList, FeatureFlag, FeatureFlagStrategy, FeatureFlagScope, FeatureFlagsClient],
  migrations: [FeatureFlags1767745501000],
  services: [
    defineService('featureFlags', [], (core) => new FeatureFlagsService(core)),
    defineService('featureFlagUserLists', [], (core) => new FeatureFlagUserListsService(core)),
  ],
  handlers: featureFlagsHandlers,
});
