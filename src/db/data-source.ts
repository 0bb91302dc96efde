import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { ChangeFeed, listeningClient, setChangeFeed } from './changes.js';
import { DroppingClient } from './pg-client.js';
import { openPGlite, pgliteDriverModule } from './pglite-driver.js';
import { installQueue } from '../core/queue.js';
import type { DatabaseTimeouts } from './timeouts.js';

export interface DatabaseTarget {
  /** A PostgreSQL URL; without one, the embedded PGlite database is used. */
  url?: string;
  /** Where PGlite keeps its files; undefined keeps it in memory. */
  pgliteDir?: string;
  /** PostgreSQL schema to work in. */
  schema?: string;
  /** A PGlite data directory dumped with `dumpDataDir()` to start from, instead of an empty database. */
  pgliteDump?: Blob;
  /** Bounds on waiting for the database; without them (tests) a query waits as long as it takes. */
  timeouts?: DatabaseTimeouts;
}

/**
 * What the data source maps and migrates: every family's entities and migrations, handed down by the
 * composition root (src/families.ts's `databaseModel`), so that the database layer names no family.
 */
export interface DatabaseModel {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: readonly Function[];
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: readonly Function[];
}

/** What the client adds to the server's statement timeout before it gives up on the connection itself. */
const CLIENT_GRACE_MS = 2000;

/** node-postgres settings that bound every wait, for a database that stops answering. */
function poolTimeouts(timeouts: DatabaseTimeouts | undefined): Record<string, unknown> {
  if (!timeouts) return {};
  return {
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    query_timeout: timeouts.statementMs + CLIENT_GRACE_MS,
    // A peer that vanished without closing is noticed by the kernel, not only by the next query.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

export async function createDataSource(target: DatabaseTarget, model: DatabaseModel): Promise<DataSource> {
  const common = {
    type: 'postgres' as const,
    entities: [...model.entities],
    migrations: [...model.migrations],
    migrationsRun: false,
    synchronize: false,
  };
  let options: DataSourceOptions;
  let feed: ChangeFeed;
  if (target.url) {
    feed = new ChangeFeed({
      connectionString: target.url,
      keepAlive: true,
      connectionTimeoutMillis: target.timeouts?.connectMs,
    });
    options = {
      ...common,
      url: target.url,
      schema: target.schema,
      extra: {
        ...(target.schema ? { options: `-c search_path=${target.schema}` } : {}),
        ...poolTimeouts(target.timeouts),
        Client: listeningClient(DroppingClient, feed),
      },
    };
  } else {
    if (target.pgliteDir) fs.mkdirSync(path.dirname(target.pgliteDir), { recursive: true });
    const db = await openPGlite(target.pgliteDir, target.pgliteDump);
    // The session is busy with other requests' transactions, git work included, so a request may wait
    // for it as long as it could wait on PostgreSQL for a connection and then a statement.
    const timeouts = target.timeouts;
    const driver = pgliteDriverModule(db, {
      connectTimeoutMs: timeouts && timeouts.connectMs + timeouts.statementMs,
    });
    options = { ...common, driver } as DataSourceOptions;
    feed = new ChangeFeed();
    await feed.attach(db);
  }
  const dataSource = new DataSource(options);
  await dataSource.initialize();
  setChangeFeed(dataSource, feed);
  return dataSource;
}

/** The migrations' names, in order: what a migrated schema is. */
export const migrationNames = (model: DatabaseModel): string[] =>
  model.migrations.map((migration) => migration.name);

export async function migrate(dataSource: DataSource): Promise<void> {
  await dataSource.runMigrations({ transaction: 'each' });
  await installQueue(dataSource);
}
