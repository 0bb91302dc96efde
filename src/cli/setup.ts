import 'reflect-metadata';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/open.js';
import { ensureRootUser } from '../users/root-user.js';

/** `make run`'s first step: migrate, make sure root exists, and say how to reach it. */
const config = loadConfig();
const dataSource = await openDatabase(config);
const root = await ensureRootUser(dataSource, config);
await dataSource.destroy();
process.stdout.write(
  `Database migrated (${config.databaseUrl ? 'PostgreSQL' : `embedded, in ${config.dataDir}`}).\n`,
);
process.stdout.write(`URL:        ${config.externalUrl}/api/v4\n`);
process.stdout.write(`Root token: ${root.generatedToken ?? root.knownToken ?? root.tokenSource}\n`);
