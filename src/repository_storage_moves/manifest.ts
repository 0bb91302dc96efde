import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { RepositoryStorageMoves1767745600000 } from './migrations/1767745600000-repository-storage-moves.js';
import { SnippetRepositoryStorageMoves1767745700000 } from './migrations/1767745700000-snippet-repository-storage-moves.js';
import { RepositoryStorageMove } from './repository-storage-move.entity.js';
import { repositoryStorageMovesHandlers } from './repository-storage-moves.handlers.js';
import { RepositoryStorageMovesService } from './repository-storage-moves.service.js';
import { groupContainer, projectContainer, snippetContainer } from './storage-move-containers.js';
import { StorageMover } from './storage-mover.js';
import { RepositoryWriteGate } from './write-gate.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    repositoryStorageMoves: RepositoryStorageMovesService;
    /** Moves repositories between storages (repository storage moves run it on the queue). */
    storageMover: StorageMover;
    /** Keeps a repository read-only while it moves between storages, and counts its writers. */
    writeGate: RepositoryWriteGate;
  }
}

export const repositoryStorageMovesManifest = defineFamily({
  name: 'repository_storage_moves',
  entities: [RepositoryStorageMove],
  migrations: [RepositoryStorageMoves1767745600000, SnippetRepositoryStorageMoves1767745700000],
  services: [
    defineService('writeGate', [], () => new RepositoryWriteGate()),
    defineService(
      'storageMover',
      ['storage', 'writeGate', 'repositories', 'snippetRepositories'],
      (core, deps) =>
        new StorageMover(
          core.dataSource,
          deps.storage,
          deps.writeGate,
          (storage, borrowerId, lenderId) => deps.repositories.dissociate(storage, borrowerId, lenderId),
          [projectContainer(deps.storage), groupContainer(), snippetContainer(deps.snippetRepositories)],
        ),
    ),
    defineService(
      'repositoryStorageMoves',
      ['projects', 'groups', 'storage', 'writeGate', 'storageMover'],
      (core, deps) => new RepositoryStorageMovesService(core, deps),
    ),
  ],
  subscribers: ({ storageMover, repositoryStorageMoves }) => [
    defineSubscriber({
      event: 'repository_storage_move.scheduled',
      name: 'repository_storage_moves.move',
      // A move killed with its process resumes soon after the restart; its repository is read-only meanwhile.
      retryDelaySeconds: 2,
      retryBackoff: false,
      handle: ({ moveId }) => storageMover.run(moveId),
    }),
    defineSubscriber({
      event: 'repository_storage_moves.requested',
      name: 'repository_storage_moves.schedule_all',
      handle: ({ containerType, source, destination }) =>
        repositoryStorageMoves.scheduleEach(containerType, source, destination),
    }),
  ],
  handlers: repositoryStorageMovesHandlers,
});
