import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { PushEvent } from './push-event.entity.js';
import { RepositoriesService } from './repositories.service.js';
import { SnippetRepositories } from './snippet-repositories.js';
import { StorageRecovery } from './storage-recovery.js';
import { RepositoryStorage } from './storage.js';
import { RepositoryWriteGate } from './write-gate.js';
import { groupContainer, projectContainer, snippetContainer } from './storage-move-containers.js';
import { StorageMover } from './storage-moves.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    storage: RepositoryStorage;
    /** Puts the storages right after a crash: orphans, unfinished creations, leftovers of pushes. */
    storageRecovery: StorageRecovery;
    /** Every family reaches a project's repository through this, so that the push rules apply. */
    repositories: RepositoriesService;
    /** Snippets' repositories (`@snippets/<hash>.git`), beside the projects' in the same storages. */
    snippetRepositories: SnippetRepositories;
    /** Keeps a repository read-only while it moves between storages, and counts its writers. */
    writeGate: RepositoryWriteGate;
    /** Moves repositories between storages (repository storage moves run it on the queue). */
    storageMover: StorageMover;
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
    defineService(
      'snippetRepositories',
      ['storage'],
      (_core, { storage }) => new SnippetRepositories(storage),
    ),
    defineService('writeGate', [], () => new RepositoryWriteGate()),
    defineService(
      'repositories',
      ['storage', 'writeGate'],
      (core, { storage, writeGate }) => new RepositoriesService(core, storage, writeGate),
    ),
    defineService(
      'storageMover',
      ['storage', 'writeGate', 'repositories', 'snippetRepositories'],
      (core, deps) => {
        const mover = new StorageMover(core.dataSource, deps.storage, deps.writeGate, deps.repositories);
        mover.register(projectContainer(deps.storage));
        mover.register(groupContainer());
        mover.register(snippetContainer(deps.snippetRepositories));
        return mover;
      },
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
