import { snippetsAbilities } from './abilities.js';
import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { Snippets1767745300000 } from './migrations/1767745300000-snippets.js';
import { SnippetRepositories } from './snippet-repositories.js';
import { Snippet } from './snippet.entity.js';
import { snippetsHandlers } from './snippets.handlers.js';
import { SnippetsService } from './snippets.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    snippets: SnippetsService;
    /** Snippets' repositories (`@snippets/<hash>.git`), beside the projects' in the same storages. */
    snippetRepositories: SnippetRepositories;
  }
}

export const snippetsManifest = defineFamily({
  name: 'snippets',
  abilities: snippetsAbilities,
  entities: [Snippet],
  migrations: [Snippets1767745300000],
  services: [
    defineService(
      'snippetRepositories',
      ['storage'],
      (_core, { storage }) => new SnippetRepositories(storage),
    ),
    defineService(
      'snippets',
      ['projects', 'snippetRepositories', 'writeGate'],
      (core, deps) => new SnippetsService(core, deps),
    ),
  ],
  handlers: snippetsHandlers,
  subscribers: ({ snippets }) => [
    defineSubscriber({
      event: 'snippet.deleted',
      name: 'snippet_repository_remove',
      retryDelaySeconds: 5,
      handle: () => snippets.removeDeletedRepositories(),
    }),
    // A project's snippets go with its row; their repositories follow here.
    defineSubscriber({
      event: 'project.deleted',
      name: 'project_snippet_repositories_remove',
      retryDelaySeconds: 5,
      handle: () => snippets.removeDeletedRepositories(),
    }),
  ],
});
