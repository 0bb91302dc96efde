/**
 * One migrated database per `vitest` run, which every test file copies instead of replaying the
 * migrations: a PostgreSQL template database, or a dumped PGlite data directory.
 */
import 'reflect-metadata';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { migrate } from '../../src/db/data-source.js';
import { entities, migrations } from '../../src/families.js';
import { openPGlite, pgliteDriverModule } from '../../src/db/pglite-driver.js';

/** What the global setup hands to every test file. */
export interface TestTemplate {
  /** PostgreSQL: the template database's name. */
  database?: string;
  /** PostgreSQL: the prefix of this run's databases, which the global teardown drops. */
  prefix?: string;
  /** PGlite: the file holding the dumped, migrated data directory. */
  pgliteDump?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    forgeTestTemplate: TestTemplate;
  }
}

/** Databases of a run are named `forge_test_<run>_…`, its template `forge_test_template_<migrations>_<run>`. */
const PREFIX = 'forge_test_';
/** `<unix seconds>_<random>`: the time lets a later run find what a crashed one left behind. */
const STALE_AFTER_S = 6 * 60 * 60;
const RUN_TIME = /^forge_test_(?:template_[0-9a-f]+_)?(\d+)_[0-9a-f]+(?:_|$)/;

/** The migrations' names: a new or renamed migration makes a template of another name. */
export const migrationsHash = () =>
  crypto
    .createHash('sha256')
    .update(migrations.map((migration) => migration.name).join('\n'))
    .digest('hex')
    .slice(0, 10);

/** `url` with its database replaced by `database`. */
export function databaseUrl(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Drops databases a few at a time. PostgreSQL checkpoints for every DROP DATABASE; drops that run
 * together share a checkpoint, one after another they would each wait for their own.
 */
async function dropDatabases(url: string, names: string[]): Promise<void> {
  const queue = [...names];
  const dropOne = (client: pg.Client, name: string) =>
    client
      .query(`ALTER DATABASE ${name} WITH IS_TEMPLATE false`)
      .then(() => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  await Promise.all(
    Array.from({ length: Math.min(8, queue.length) }, () =>
      withClient(url, async (client) => {
        for (let name = queue.shift(); name; name = queue.shift())
          await dropOne(client, name).catch(() => undefined);
      }),
    ),
  );
}

const databasesLike = (client: pg.Client, pattern: string) =>
  client
    .query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [pattern])
    .then((result) => result.rows.map((row) => row.datname));

/**
 * Creates and migrates this run's template database (after dropping what runs that crashed long ago
 * left). Returns what test files need, and the teardown that drops the template and every database
 * of the run.
 */
export async function createPostgresTemplate(
  url: string,
): Promise<{ template: TestTemplate; drop: () => Promise<void> }> {
  const run = `${Math.floor(Date.now() / 1000)}_${crypto.randomBytes(3).toString('hex')}`;
  const name = `${PREFIX}template_${migrationsHash()}_${run}`;
  const prefix = `${PREFIX}${run}_`;
  const stale = await withClient(url, async (client) => {
    const now = Date.now() / 1000;
    return (await databasesLike(client, `${PREFIX}%`)).filter((datname) => {
      const time = RUN_TIME.exec(datname)?.[1];
      return time !== undefined && now - Number(time) > STALE_AFTER_S;
    });
  });
  await dropDatabases(url, stale);
  await withClient(url, (client) => client.query(`CREATE DATABASE ${name}`));
  const dataSource = new DataSource({
    type: 'postgres',
    url: databaseUrl(url, name),
    entities,
    migrations,
    migrationsRun: false,
    synchronize: false,
  });
  await dataSource.initialize();
  try {
    await migrate(dataSource);
  } finally {
    // No session may stay on a template while test files copy it.
    await dataSource.destroy();
  }
  await withClient(url, (client) =>
    client.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`),
  );
  return {
    template: { database: name, prefix },
    drop: async () => {
      const names = await withClient(url, (client) => databasesLike(client, `${prefix}%`));
      await dropDatabases(url, [...names, name]);
    },
  };
}

/** Migrates an in-memory PGlite once and dumps its data directory to a file; returns the file. */
export async function createPGliteDump(): Promise<{ file: string; drop: () => Promise<void> }> {
  const db = await openPGlite(undefined);
  const dataSource = new DataSource({
    type: 'postgres',
    driver: pgliteDriverModule(db),
    entities,
    migrations,
    migrationsRun: false,
    synchronize: false,
  } as never);
  await dataSource.initialize();
  await migrate(dataSource);
  const dump = await db.dumpDataDir('none');
  await dataSource.destroy();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-test-pglite-'));
  const file = path.join(dir, `migrated-${migrationsHash()}.tar`);
  fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  return { file, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}
