import { defineFamily, defineService } from '../core/family.js';
import { StorageRecovery } from './storage-recovery.js';
import { RepositoryStorage } from './storage.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    storage: RepositoryStorage;
    /** Puts the storages right after a crash: orphans, unfinished creations, leftovers of pushes. */
    storageRecovery: StorageRecovery;
  }
}

/**
 * Git itself: where repositories live, how processes run and refs move. Not an API family, and it
 * names none: families reach it through its modules and extend pushes through `pre-receive.ts`.
 */
export const gitManifest = defineFamily({
  name: 'git',
  services: [
    defineService('storage', [], (core) => new RepositoryStorage(core.config.storages)),
    defineService(
      'storageRecovery',
      ['storage'],
      (core, { storage }) => new StorageRecovery(core.dataSource, storage),
    ),
  ],
});
