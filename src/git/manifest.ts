import { defineFamily, defineService } from '../core/family.js';
import { PushEvent } from './push-event.entity.js';
import { RepositoriesService } from './repositories.service.js';
import { RepositoryStorage } from './storage.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    storage: RepositoryStorage;
    /** Every family reaches a project's repository through this, so that the push rules apply. */
    repositories: RepositoriesService;
  }
}

/** Git itself: where repositories live, and how refs move. Not an API family, but built like one. */
export const gitManifest = defineFamily({
  name: 'git',
  entities: [PushEvent],
  services: [
    defineService('storage', [], (core) => new RepositoryStorage(core.config.storages)),
    defineService('repositories', ['storage'], (core, { storage }) => new RepositoriesService(core, storage)),
  ],
});
