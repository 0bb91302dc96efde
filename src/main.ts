import 'reflect-metadata';
import { createApp } from './app.js';
import { loadConfig } from './config.js';
import { createObjectStore } from './core/object-store.js';
import { uploadSpoolDir } from './core/api.js';
import { createHttpServer, sweepUploadSpool } from './core/http.js';
import { startFailure } from './db/errors.js';
import { claimInstance } from './db/instance.js';
import { openDatabase } from './db/open.js';
import { oneStartAtATime } from './db/startup-lock.js';
import { databaseModel } from './families.js';
import type { StorageRecovery } from './git/storage-recovery.js';
import { createLogger, type Logger } from './logger.js';
import { ensureRootUser } from './users/root-user.js';

/** This process's start: at startup, what git left before it is stale when no other server runs. */
const STARTED_AT = new Date(Date.now() - process.uptime() * 1000);
/** How often every process sweeps the storages, and how old git's leftovers must be when others run. */
const SWEEP_EVERY_MS = 60 * 60 * 1000;
const LEFTOVER_AGE_MS = 60 * 60 * 1000;

/** Runs the storage recovery one sweep at a time, logging what it did. */
function storageRecovery(recovery: StorageRecovery, spool: string, logger: Logger) {
  let running: Promise<void> = Promise.resolve();
  const run = (staleBefore: Date) =>
    (running = running.then(async () => {
      try {
        const report = await recovery.recover({ staleBefore });
        const uploads = await sweepUploadSpool(spool, staleBefore);
        const { missing, ...counts } = { ...report, uploads };
        if (Object.values(counts).some((n) => n > 0)) logger.info(counts, 'storage recovered');
        if (missing.length) logger.warn({ projects: missing }, 'projects without a repository');
      } catch (err) {
        logger.warn({ err }, 'storage recovery failed');
      }
    }));
  return { run, idle: () => running };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // A bucket that is missing or refuses the credentials stops the start with why, not the first upload.
  await createObjectStore(config.objectStore).check();
  // Several processes may start together on one database: their start-up writes take turns.
  const { dataSource, root, app } = await oneStartAtATime(
    config.databaseUrl,
    config.database.connectMs,
    async () => {
      const dataSource = await openDatabase(config, databaseModel);
      const root = await ensureRootUser(dataSource, config);
      return { dataSource, root, app: await createApp({ config, dataSource, logger }) };
    },
  );
  const recovery = storageRecovery(app.services.storageRecovery, uploadSpoolDir(config), logger);
  const claim = await claimInstance(dataSource, !config.databaseUrl);
  // Before serving: what a killed predecessor left is gone before anyone looks (see StorageRecovery).
  await recovery.run(claim.alone ? STARTED_AT : new Date(Date.now() - LEFTOVER_AGE_MS));
  const sweeps = setInterval(() => void recovery.run(new Date(Date.now() - LEFTOVER_AGE_MS)), SWEEP_EVERY_MS);
  sweeps.unref();
  const server = createHttpServer(app.koa.callback(), config.bodyTimeoutSeconds);
  server.listen(config.port, config.host);
  await new Promise<void>((resolve) => server.once('listening', resolve));
  // Last resort: every stream's errors are handled where it is made, but a fault that still escapes
  // one request is logged and must not end the others.
  process.on('uncaughtException', (err) => logger.error({ err }, 'uncaught exception'));
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));

  // The token only on the start that generated it; FORGE_ROOT_TOKEN's or a saved one never.
  if (root.generatedToken)
    process.stdout.write(
      `root token (shown once, also saved to ${root.tokenFile}): ${root.generatedToken}\n`,
    );
  process.stdout.write(`forge-api listening on ${config.externalUrl} (API: ${config.externalUrl}/api/v4)\n`);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Requests in flight and running jobs finish (a job still running at the queue's deadline is
    // retried later, by this or another process) before the database closes.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    clearInterval(sweeps);
    Promise.all([closed, app.stop(), recovery.idle()])
      .then(() => claim.release())
      .then(() => dataSource.destroy())
      .then(() => process.exit(0))
      .catch(() => process.exit(1));
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `forge-api failed to start: ${startFailure(err, process.env.DATABASE_URL || undefined)}\n`,
  );
  process.exit(1);
});
