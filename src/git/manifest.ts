import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { PushEvent } from './push-event.entity.js';
import { RepositoriesService } from './repositories.service.js';
import { SnippetRepositories } from './snippet-repositories.js';
import { StorageRecovery } from './storage-recovery.js';
import { RepositoryStorage } from './storage.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    storage: RepositoryStorage;
    /** Puts the storages right after a crash: orphans, unfinished creations, leftovers of pushes. */
    storageRecovery: StorageRecovery;
    /** Every family reaches a project's repository through this, so that the push rules apply. */
    repositories: RepositoriesService;
    /** Snippets' repositories (`@snippets/<hash>.git`), beside the projects' in the same storages. */
    snippetRepositories: SnippetRepositories;
  }
}

/** Git itself: where repositories live, and how refs move. Not an API family, but built like one. */
export const gitManifest = defineFamily({
  name: 'git',
  entities: [PushEvent],
  services: [
    defineService('storage', [], (core) => new RepositoryStorage(core.config.storages)),
    defineService(
      'storageRecovery',
      ['storage'],
      (core, { storage }) => new StorageRecovery(core.dataSource, storage),
    ),
    defineService('repositories', ['storage'], (core, { storage }) => new RepositoriesService(core, storage)),
    defineService(
      'snippetRepositories',
      ['storage'],
      (_core, { storage }) => new SnippetRepositories(storage),
    ),
  ],
  subscribers: ({ repositories }) => [
    // Every push may leave work for housekeeping; its own checks decide whether there is any.
    defineSubscriber({
      event: 'refs.updated',
      name: 'git.housekeeping_after_push',
      handle: async ({ projectId }) => void (await repositories.housekeep(projectId, 'auto')),
    }),
    defineSubscriber({
      event: 'repository.housekeeping_requested',
      name: 'git.housekeeping',
      handle: async ({ projectId, task }) => void (await repositories.housekeep(projectId, task ?? 'auto')),
    }),
  ],
});
