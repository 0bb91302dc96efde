import { EventEmitter } from 'node:events';
import v8 from 'node:v8';
import { PGlite, types, type PGliteOptions } from '@electric-sql/pglite';

/**
 * A `pg`-compatible driver module for TypeORM over one embedded PGlite instance.
 *
 * PGlite has a single session, so a "connection" is an exclusive lease on it: a second query runner
 * waits until the first releases. Without this, concurrent transactions would interleave their
 * statements inside one another's BEGIN ... COMMIT.
 */
class PGliteConnection extends EventEmitter {
  constructor(private readonly db: PGlite) {
    super();
  }

  async query(
    sql: string,
    params?: unknown[],
  ): Promise<{ rows: unknown[]; rowCount: number; command: string }> {
    const command = sql.trimStart().split(/\s/, 1)[0].toUpperCase();
    if (params && params.length > 0) {
      const result = await this.db.query(sql, params);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length, command };
    }
    const results = await this.db.exec(sql);
    const last = results[results.length - 1];
    return { rows: last?.rows ?? [], rowCount: last?.affectedRows ?? last?.rows.length ?? 0, command };
  }
}

type ConnectCallback = (
  err: Error | null,
  connection?: PGliteConnection,
  release?: (err?: unknown) => void,
) => void;

/**
 * `connectTimeoutMs` bounds the wait for the session, as the PostgreSQL pool bounds the wait for a
 * connection: statements cannot be timed out inside PGlite (it runs on this thread), but a request queued
 * behind a transaction that does not end gives up instead of hanging.
 */
export function pgliteDriverModule(
  db: PGlite,
  options: { connectTimeoutMs?: number } = {},
): { Pool: new () => EventEmitter } {
  const connection = new PGliteConnection(db);
  const waiting: Array<() => void> = [];
  let leased = false;

  const lease = (callback: ConnectCallback) => {
    leased = true;
    let released = false;
    callback(null, connection, () => {
      if (released) return;
      released = true;
      leased = false;
      waiting.shift()?.();
    });
  };

  class Pool extends EventEmitter {
    connect(callback: ConnectCallback): void {
      if (!leased && waiting.length === 0) {
        leased = true;
        // Asynchronous like a real pool; the lease is already this caller's.
        queueMicrotask(() => lease(callback));
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      const take = () => {
        clearTimeout(timer);
        lease(callback);
      };
      waiting.push(take);
      if (options.connectTimeoutMs) {
        timer = setTimeout(() => {
          const index = waiting.indexOf(take);
          if (index < 0) return;
          waiting.splice(index, 1);
          callback(new Error('timeout exceeded when trying to connect'));
        }, options.connectTimeoutMs);
      }
    }

    end(callback?: (err: Error | null) => void): void {
      const close = () => {
        leased = true;
        db.close().then(
          () => callback?.(null),
          (err: Error) => callback?.(err),
        );
      };
      if (leased || waiting.length > 0) waiting.push(close);
      else close();
    }
  }
  return { Pool };
}

/** `loadDataDir`: a data directory dumped with `dumpDataDir()` to start from (tests start from a migrated one). */
export async function openPGlite(dataDir: string | undefined, loadDataDir?: Blob): Promise<PGlite> {
  // PostgreSQL's WebAssembly stays with V8's baseline compiler: optimizing it took a second of CPU
  // and 90 MB at each start, for queries about a fifth faster. Only PGlite runs WebAssembly here.
  v8.setFlagsFromString('--liftoff-only');
  const options: PGliteOptions = {
    loadDataDir,
    // PostgreSQL's default 128 MB of shared buffers is resident from the start; a development
    // database needs far less.
    startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'],
    // Booleans bound as parameters must reach SQL as TRUE/FALSE, as node-postgres sends them.
    serializers: {
      [types.BOOL]: (value: unknown) => (value === true || value === 'true' ? 'TRUE' : 'FALSE'),
    },
  };
  return dataDir ? PGlite.create(dataDir, options) : PGlite.create(options);
}
