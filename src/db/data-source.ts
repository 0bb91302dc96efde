import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { InternalId } from './internal-id.entity.js';
import { Initial1767225600000 } from './migrations/1767225600000-initial.js';
import { ProjectCustomAttributes1767312000000 } from './migrations/1767312000000-project-custom-attributes.js';
import { Identity1767398400000 } from './migrations/1767398400000-identity.js';
import { Repositories1767484800000 } from './migrations/1767484800000-repositories.js';
import { openPGlite, pgliteDriverModule } from './pglite-driver.js';
import { User } from '../users/user.entity.js';
import { PersonalAccessToken } from '../users/personal-access-token.entity.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import { Member } from '../members/member.entity.js';
import { ProjectGroupLink } from '../members/project-group-link.entity.js';
import { Project } from '../projects/project.entity.js';
import { ProjectStatistics } from '../projects/project-statistics.entity.js';
import { ProjectCustomAttribute } from '../projects/custom-attribute.entity.js';
import {
  ProtectedBranch,
  ProtectedBranchAccessLevel,
} from '../protected_branches/protected-branch.entity.js';
import { ProtectedTag, ProtectedTagCreateAccessLevel } from '../protected_tags/protected-tag.entity.js';
import { PushEvent } from '../git/push-event.entity.js';

export const entities = [
  User,
  PersonalAccessToken,
  Namespace,
  Member,
  ProjectGroupLink,
  Project,
  ProjectStatistics,
  ProjectCustomAttribute,
  InternalId,
  ProtectedBranch,
  ProtectedBranchAccessLevel,
  ProtectedTag,
  ProtectedTagCreateAccessLevel,
  PushEvent,
];
export const migrations = [
  Initial1767225600000,
  ProjectCustomAttributes1767312000000,
  Identity1767398400000,
  Repositories1767484800000,
];

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
}
