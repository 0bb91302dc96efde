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
import { loadConfig } from '../../src/config.js';
import { Events } from '../../src/core/events.js';
import { Queue } from '../../src/core/queue.js';
import { createDataSource, migrate } from '../../src/db/data-source.js';
import {
  createServices,
  createSubscribers,
  databaseModel,
  entities,
  migrations,
} from '../../src/families.js';
import { openPGlite, pgliteDriverModule } from '../../src/db/pglite-driver.js';
import { createLogger } from '../../src/logger.js';

/** What the global setup hands to every test file. */
export interface TestTemplate {
  /** PostgreSQL: the template database's name. */
  database?: string;
  /**
   * PostgreSQL: the same, with the application's job queues already declared, for servers started in
   * the test process (test/helpers/server.ts), whose start then only finds them: declaring twenty
   * queues (a partition table each) costs a file a quarter of a second or more. Server processes, and
   * the tests of the queue itself, start from `database`, where a server still declares them.
   */
  serverDatabase?: string;
  /** PostgreSQL: the prefix of this run's databases, which the global teardown drops. */
  prefix?: string;
  /** PGlite: the file holding the dumped, migrated data directory. */
  pgliteDump?: string;
  /** PGlite: the same, with the application's job queues declared (see `serverDatabase`). */
  pgliteServerDump?: string;
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
 * Declares the application's job queues in a migrated database, as a server's start does (the same
 * subscribers, the same policies), then stops their workers: a server started on a copy finds them.
 */
async function declareQueues(dataSource: DataSource): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-test-queues-'));
  try {
    const config = loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: dataDir });
    const events = new Events(await Queue.create(dataSource, config.queue));
    const services = createServices({ dataSource, config, events, logger: createLogger('silent') });
    events.subscribe(createSubscribers(services));
    await events.start();
    await events.stop();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

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
  const serverName = `${name}_queues`;
  await withClient(url, (client) => client.query(`CREATE DATABASE ${serverName} TEMPLATE ${name}`));
  const serverSource = await createDataSource({ url: databaseUrl(url, serverName) }, databaseModel);
  try {
    await declareQueues(serverSource);
  } finally {
    await serverSource.destroy();
  }
  await withClient(url, async (client) => {
    for (const template of [name, serverName])
      await client.query(`ALTER DATABASE ${template} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
  });
  return {
    template: { database: name, serverDatabase: serverName, prefix },
    drop: async () => {
      const names = await withClient(url, (client) => databasesLike(client, `${prefix}%`));
      await dropDatabases(url, [...names, serverName, name]);
    },
  };
}

/**
 * Migrates an in-memory PGlite once and dumps its data directory to a file, then declares the job
 * queues and dumps it again (see `serverDatabase`); returns the files.
 */
export async function createPGliteDump(): Promise<{
  file: string;
  serverFile: string;
  drop: () => Promise<void>;
}> {
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
  await declareQueues(dataSource);
  const serverDump = await db.dumpDataDir('none');
  await dataSource.destroy();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-test-pglite-'));
  const file = path.join(dir, `migrated-${migrationsHash()}.tar`);
  const serverFile = path.join(dir, `migrated-queues-${migrationsHash()}.tar`);
  fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  fs.writeFileSync(serverFile, Buffer.from(await serverDump.arrayBuffer()));
  return { file, serverFile, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}
