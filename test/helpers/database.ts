import crypto from 'node:crypto';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { queueSchemaFor } from '../../src/core/queue.js';
import { createDataSource, migrate } from '../../src/db/data-source.js';

/**
 * A fresh, migrated database for one test file: its own schema on the machine's PostgreSQL when
 * FORGE_TEST_DATABASE_URL is set, else its own in-memory PGlite.
 */
export async function openTestDatabase(): Promise<{ dataSource: DataSource; drop: () => Promise<void> }> {
  const url = process.env.FORGE_TEST_DATABASE_URL;
  if (!url) {
    const dataSource = await createDataSource({});
    await migrate(dataSource);
    return { dataSource, drop: () => dataSource.destroy() };
  }
  const schema = `test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const dataSource = await createDataSource({ url, schema });
  await migrate(dataSource);
  return {
    dataSource,
    drop: async () => {
      await dataSource.destroy();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.query(`DROP SCHEMA IF EXISTS ${queueSchemaFor(schema)} CASCADE`);
      await client.end();
    },
  };
}
