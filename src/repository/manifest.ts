import { repositoryAbilities } from './abilities.js';
import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { PushEvent } from './push-event.entity.js';
import { RepositoriesService } from './repositories.service.js';
import { repositoryHandlers } from './repository.handlers.js';
import { RepositoryService } from './repository.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    repository: RepositoryService;
    /** Every family reaches a project's repository through this, so that the pre-receive checks apply. */
    repositories: RepositoriesService;
  }
}

export const repositoryManifest = defineFamily({
  name: 'repository',
  abilities: repositoryAbilities,
  entities: [PushEvent],
  services: [
    defineService(
      'repositories',
      ['storage', 'writeGate'],
      (core, { storage, writeGate }) => new RepositoriesService(core, storage, writeGate),
    ),
    defineService(
      'repository',
      ['repositories', 'rateLimiter'],
      (_core, deps) => new RepositoryService(deps),
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
  handlers: repositoryHandlers,
});
