/** Events of projects' repositories (`refs.updated` is the post-receive point), added to the catalog of src/core/events.ts. */

export interface RefsUpdated {
  projectId: number;
  /** Who pushed; null for a push no user is known for. */
  userId: number | null;
  /** Each moved ref with its old and new object ids (40 zeros for a created or deleted ref). */
  changes: Array<{ ref: string; before: string; after: string }>;
  /** A `git push` over HTTP, or a write through the API. */
  via: 'git' | 'api';
  /** The push's options (`git push -o ci.skip`), when it gave any. */
  pushOptions?: string[];
}

declare module '../core/events.js' {
  interface EventCatalog {
    'refs.updated': RefsUpdated;
  }
}

/** Housekeeping asked for through the API (`POST /projects/:id/housekeeping`). */
export interface HousekeepingRequested {
  projectId: number;
  task: 'eager' | 'prune' | null;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'repository.housekeeping_requested': HousekeepingRequested;
  }
}
