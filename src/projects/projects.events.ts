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
  /** Where the project's repository was; its removal finishes in a job. */
  repository: { storage: string } | null;
  /** Repositories that borrowed its objects: each gets its own copy before the repository goes. */
  borrowers?: Array<{ storage: string; projectId: number }>;
}

/** A fork left its fork network: its repository stops borrowing objects. */
export interface ForkUnlinked {
  projectId: number;
  storage: string;
  lenderId: number;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'project.created': ProjectCreated;
    'project.deleted': ProjectDeleted;
    'project.fork_unlinked': ForkUnlinked;
  }
}
