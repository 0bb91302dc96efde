import path from 'node:path';
import type { DataSource } from 'typeorm';
import type { Config } from '../config.js';
import { createDataSource, migrate, type DatabaseModel } from './data-source.js';
import { startFromTemplate } from './pglite-template.js';

/** PostgreSQL when DATABASE_URL is set, else embedded PGlite under DATA_DIR; migrated either way. */
export async function openDatabase(config: Config, model: DatabaseModel): Promise<DataSource> {
  const pgliteDir = path.join(config.dataDir, 'pglite');
  if (!config.databaseUrl) await startFromTemplate(pgliteDir, model);
  const dataSource = await createDataSource(
    { ...(config.databaseUrl ? { url: config.databaseUrl } : { pgliteDir }), timeouts: config.database },
    model,
  );
  await migrate(dataSource);
  return dataSource;
}
