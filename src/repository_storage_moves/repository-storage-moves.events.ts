/** Events of repository storage moves, added to the catalog of src/core/events.ts. */
import type { ContainerType } from './write-gate.js';

/** A move was scheduled: its job copies, switches and cleans up (storage-mover.ts). */
export interface RepositoryStorageMoveScheduled {
  moveId: number;
}

/** Moves of every repository of a kind on a storage were asked for; the job schedules each. */
export interface RepositoryStorageMovesRequested {
  containerType: ContainerType;
  source: string;
  destination: string;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'repository_storage_move.scheduled': RepositoryStorageMoveScheduled;
    'repository_storage_moves.requested': RepositoryStorageMovesRequested;
  }
}
