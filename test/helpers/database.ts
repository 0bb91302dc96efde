import crypto from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { inject } from 'vitest';
import { createDataSource, migrate } from '../../src/db/data-source.js';
import { databaseModel } from '../../src/families.js';
import { databaseUrl, withClient } from './template-database.js';

export interface TestDatabase {
  dataSource: DataSource;
  /** Closes the data source and removes the database. */
  drop: () => Promise<void>;
  /**
   * Closes the data source; the database goes at the end of the run with the others (on PostgreSQL,
   * each DROP DATABASE waits for a checkpoint, which the run's teardown pays once for all of them).
   */
  close: () => Promise<void>;
}

/**
 * A test database's sessions commit without waiting for the WAL to reach the disk
 * (`synchronous_commit=off`): a commit is as visible and as atomic as before, and only a crash of
 * PostgreSQL itself (never of a server under test) could lose the last ones. Tests commit thousands of
 * small transactions, each of which otherwise waits for an fsync.
 */
function withoutCommitFlush(url: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', '-c synchronous_commit=off');
  return parsed.toString();
}

/** PostgreSQL refuses to copy a template while a session is connected to it; that passes. */
const TEMPLATE_IN_USE = '55006';

/**
 * A fresh, migrated database for one test file. On the machine's PostgreSQL (FORGE_TEST_DATABASE_URL
 * set) a database of its own, copied from the run's migrated template; else an in-memory PGlite started
 * from the run's migrated dump. Without the global setup (test/helpers/global-setup.ts), it migrates.
 * `withQueues`: a copy where the application's job queues are declared already (a server in the test
 * process finds them instead of creating them).
 */
export async function openTestDatabase(options: { withQueues?: boolean } = {}): Promise<TestDatabase> {
  const url = process.env.FORGE_TEST_DATABASE_URL;
  const provided = inject('forgeTestTemplate') ?? {};
  const template = options.withQueues
    ? {
        ...provided,
        database: provided.serverDatabase ?? provided.database,
        pgliteDump: provided.pgliteServerDump ?? provided.pgliteDump,
      }
    : provided;
  if (!url) {
    const pgliteDump = template.pgliteDump ? new Blob([fs.readFileSync(template.pgliteDump)]) : undefined;
    const dataSource = await createDataSource({ pgliteDump }, databaseModel);
    if (!pgliteDump) await migrate(dataSource);
    const drop = () => dataSource.destroy();
    return { dataSource, drop, close: drop };
  }
  const name = `${template.prefix ?? 'forge_test_'}${crypto.randomBytes(6).toString('hex')}`;
  await withClient(url, async (client) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(
          `CREATE DATABASE ${name}${template.database ? ` TEMPLATE ${template.database}` : ''}`,
        );
        return;
      } catch (err) {
        if ((err as pg.DatabaseError).code !== TEMPLATE_IN_USE || attempt >= 20) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  });
  // In the public schema: code deriving names from the schema option sees none.
  const dataSource = await createDataSource(
    { url: withoutCommitFlush(databaseUrl(url, name)) },
    databaseModel,
  );
  if (!template.database) await migrate(dataSource);
  const close = async () => {
    if (dataSource.isInitialized) await dataSource.destroy();
  };
  const drop = async () => {
    await close();
    await withClient(url, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  };
  return { dataSource, drop, close: template.prefix ? close : drop };
}

/**
 * A database for a server started as its own process (test/helpers/process.ts): on PostgreSQL a fresh
 * copy of the run's migrated template, dropped with the run's others, as a `DATABASE_URL`; on PGlite
 * `''`, so the server keeps an embedded database in its `DATA_DIR` and migrates it.
 */
export async function createProcessDatabaseUrl(): Promise<string> {
  const url = process.env.FORGE_TEST_DATABASE_URL;
  if (!url) return '';
  const database = await openTestDatabase();
  const name = (database.dataSource.options as { url?: string }).url;
  await database.dataSource.destroy();
  return name ?? '';
}
