import 'reflect-metadata';
import type { Server } from 'node:http';
import { createApp } from './app.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/open.js';
import { createLogger } from './logger.js';
import { ensureRootUser } from './users/root-user.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const dataSource = await openDatabase(config);
  const root = await ensureRootUser(dataSource, config);
  const app = await createApp({ config, dataSource, logger });
  const { koa } = app;
  const server: Server = koa.listen(config.port, config.host);
  // A large push uploads its pack as one request body; Node's default cuts any request off at 5 minutes.
  server.requestTimeout = 0;
  await new Promise<void>((resolve) => server.once('listening', resolve));

  process.stdout.write(`forge-api listening on ${config.externalUrl} (API: ${config.externalUrl}/api/v4)\n`);
  if (root.generatedToken) {
    process.stdout.write(
      `root token (shown once, also saved to ${root.tokenFile}): ${root.generatedToken}\n`,
    );
  } else {
    process.stdout.write(`root token: ${root.tokenSource}\n`);
  }

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Requests in flight and running jobs finish (a job still running at the queue's deadline is
    // retried later, by this or another process) before the database closes.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    Promise.all([closed, app.stop()])
      .then(() => dataSource.destroy())
      .then(() => process.exit(0))
      .catch(() => process.exit(1));
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error('forge-api failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
