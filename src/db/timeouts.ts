/** Bounds on waiting for the database; a module of its own, importing nothing, so config.ts can name it. */
export interface DatabaseTimeouts {
  /** Waiting for a connection: to open one, or for a free one in the pool (PGlite: plus statementMs). */
  connectMs: number;
  /** One statement, cancelled by the server; the client stops waiting a little later. */
  statementMs: number;
}
