import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { openPGlite, pgliteDriverModule } from './pglite-driver.js';
import { entities, migrations } from '../families.js';
import { installQueue } from '../core/queue.js';

export interface DatabaseTarget {
  /** A PostgreSQL URL; without one, the embedded PGlite database is used. */
  url?: string;
  /** Where PGlite keeps its files; undefined keeps it in memory. */
  pgliteDir?: string;
  /** PostgreSQL schema to work in. */
  schema?: string;
  /** A PGlite data directory dumped with `dumpDataDir()` to start from, instead of an empty database. */
  pgliteDump?: Blob;
}

export async function createDataSource(target: DatabaseTarget): Promise<DataSource> {
  const common = {
    type: 'postgres',
    entities,
    migrations,
    migrationsRun: false,
    synchronize: false,
  } as const;
  let options: DataSourceOptions;
  if (target.url) {
    options = {
      ...common,
      url: target.url,
      schema: target.schema,
      extra: target.schema ? { options: `-c search_path=${target.schema}` } : undefined,
    };
  } else {
    if (target.pgliteDir) fs.mkdirSync(path.dirname(target.pgliteDir), { recursive: true });
    const db = await openPGlite(target.pgliteDir, target.pgliteDump);
    options = { ...common, driver: pgliteDriverModule(db) } as DataSourceOptions;
  }
  const dataSource = new DataSource(options);
  await dataSource.initialize();
  return dataSource;
}

export async function migrate(dataSource: DataSource): Promise<void> {
  await dataSource.runMigrations({ transaction: 'each' });
  await installQueue(dataSource);
}
