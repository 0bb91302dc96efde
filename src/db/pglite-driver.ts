import { EventEmitter } from 'node:events';
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

export function pgliteDriverModule(db: PGlite): { Pool: new () => EventEmitter } {
  const connection = new PGliteConnection(db);
  let lease: Promise<void> = Promise.resolve();

  class Pool extends EventEmitter {
    connect(callback: ConnectCallback): void {
      const previous = lease;
      let release!: () => void;
      lease = new Promise<void>((resolve) => (release = resolve));
      previous.then(() => {
        let released = false;
        callback(null, connection, () => {
          if (released) return;
          released = true;
          release();
        });
      });
    }

    end(callback?: (err: Error | null) => void): void {
      lease
        .then(() => db.close())
        .then(
          () => callback?.(null),
          (err: Error) => callback?.(err),
        );
    }
  }
  return { Pool };
}

/** `loadDataDir`: a data directory dumped with `dumpDataDir()` to start from (tests start from a migrated one). */
export async function openPGlite(dataDir: string | undefined, loadDataDir?: Blob): Promise<PGlite> {
  const options: PGliteOptions = {
    loadDataDir,
    // Booleans bound as parameters must reach SQL as TRUE/FALSE, as node-postgres sends them.
    serializers: {
      [types.BOOL]: (value: unknown) => (value === true || value === 'true' ? 'TRUE' : 'FALSE'),
    },
  };
  return dataDir ? PGlite.create(dataDir, options) : PGlite.create(options);
}
