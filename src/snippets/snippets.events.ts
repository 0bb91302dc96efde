/** The snippets family's events, added to the catalog of src/core/events.ts. */

export interface SnippetDeleted {
  snippetId: number;
  /** Where the snippet's repository was; its removal finishes in a job. */
  storage: string;
  projectId: number | null;
}

declare module '../core/events.js' {
  interface EventCatalog {
    'snippet.deleted': SnippetDeleted;
  }
}
