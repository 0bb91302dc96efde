import { repositoryAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { repositoryHandlers } from './repository.handlers.js';
import { RepositoryService } from './repository.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    repository: RepositoryService;
  }
}

export const repositoryManifest = defineFamily({
  name: 'repository',
  abilities: repositoryAbilities,
  services: [
    defineService(
      'repository',
      ['repositories', 'rateLimiter'],
      (_core, deps) => new RepositoryService(deps),
    ),
  ],
  handlers: repositoryHandlers,
});
