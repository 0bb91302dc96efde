import 'reflect-metadata';
import { loadConfig } from '../config.js';
import { startFailure } from '../db/errors.js';
import { openDatabase } from '../db/open.js';
import { oneStartAtATime } from '../db/startup-lock.js';
import { databaseModel } from '../families.js';
import { ensureRootUser } from '../users/root-user.js';

/** `make run`'s first step: migrate, make sure root exists, and say how to reach it. */
try {
  const config = loadConfig();
  // Servers or other setups may start on the same database at the same time.
  const { dataSource, root } = await oneStartAtATime(
    config.databaseUrl,
    config.database.connectMs,
    async () => {
      const dataSource = await openDatabase(config, databaseModel);
      return { dataSource, root: await ensureRootUser(dataSource, config) };
    },
  );
  await dataSource.destroy();
  process.stdout.write(
    `Database migrated (${config.databaseUrl ? 'PostgreSQL' : `embedded, in ${config.dataDir}`}).\n`,
  );
  process.stdout.write(`URL:        ${config.externalUrl}/api/v4\n`);
  // Printed once, by the run that generated it; FORGE_ROOT_TOKEN's or a saved one is only named.
  process.stdout.write(`Root token: ${root.generatedToken ?? root.tokenSource}\n`);
} catch (err) {
  // One line for the operator, not a stack trace.
  process.stderr.write(
    `forge-api setup failed: ${startFailure(err, process.env.DATABASE_URL || undefined)}\n`,
  );
  process.exit(1);
}
