/** The projects family's events, added to the catalog of src/core/events.ts. */

export interface ProjectCreated {
  projectId: number;
  userId: number;
  fullPath: string;
}

export interface ProjectDeleted {
  projectId: number;
  userId: number | null;
  fullPath: string;
  /** The repository as deletion moved it aside (`aside` relative to `storage`); null when it had none. */
  repository: { storage: string; aside: string } | null;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'project.created': ProjectCreated;
    'project.deleted': ProjectDeleted;
  }
}
