import crypto from 'node:crypto';
import Koa from 'koa';
import type { DataSource } from 'typeorm';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { apiMiddleware } from './core/api.js';
import { createBackend, type Backend } from './core/contract.js';
import { errorMiddleware } from './core/error-middleware.js';
import { bodyDeadline, rejectMalformedStrings } from './core/http.js';
import { Events, type AnySubscriber } from './core/events.js';
import { Queue } from './core/queue.js';
import { routeNotFound } from './core/errors.js';
import { responseValidation, type ResponseCheck } from './core/response-validation.js';
import { gitHttp } from './git_http/smart-http.js';
import { createMetrics } from './ops/metrics.js';
import { opsRouter } from './ops/routes.js';
import { uploadsWebRouter } from './uploads/web-routes.js';
import {
  createServices,
  createSubjectResolvers,
  createCallerCredentialResolvers,
  createCredentialResolvers,
  createSubscribers,
  handlers,
  type Services,
} from './families.js';

export interface AppOptions {
  config: Config;
  dataSource: DataSource;
  logger: Logger;
  backend?: Backend;
  /** When set, every API response is checked against the contract and reported here. */
  onResponseCheck?: (check: ResponseCheck) => void;
  /** Subscribers besides the families' own (tests add theirs). */
  subscribers?: (services: Services) => readonly AnySubscriber[];
}

export interface App {
  koa: Koa;
  services: Services;
  events: Events;
  /** Stops the queue's workers (running jobs finish or are retried later); the DataSource stays open. */
  stop(): Promise<void>;
}

const REQUEST_ID = /^[\w.-]{1,128}$/;

export async function createApp(options: AppOptions): Promise<App> {
  const { config, dataSource, logger } = options;
  const backend = options.backend ?? (await createBackend());
  const queue = await Queue.create(dataSource, config.queue, (err) => logger.warn({ err }, 'job queue'));
  const events = new Events(queue);
  const services = createServices({ dataSource, config, events, logger });
  events.subscribe([...createSubscribers(services), ...(options.subscribers?.(services) ?? [])]);
  await events.start();
  const metrics = createMetrics();
  const koa = new Koa({ proxy: true });
  // A client that hangs up during a streamed download is not a server fault.
  const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ECONNABORTED']);
  koa.on('error', (err: NodeJS.ErrnoException) => {
    if (CLIENT_GONE.has(err.code ?? '')) return;
    logger.error({ err }, 'unhandled error');
  });

  koa.use(async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    // When request lines are not logged (LOG_LEVEL=warn), nothing is built for them.
    if (!logger.isLevelEnabled('info')) return next();
    const started = process.hrtime.bigint();
    await next();
    logger.info(
      {
        requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        operationId: ctx.state.operationId,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      },
      'request',
    );
  });
  koa.use(bodyDeadline(config.bodyTimeoutSeconds));
  koa.use(metrics.middleware);
  if (options.onResponseCheck) koa.use(responseValidation(backend, logger, options.onResponseCheck));
  koa.use(errorMiddleware(logger));
  koa.use(rejectMalformedStrings);
  const subjects = createSubjectResolvers(services);
  const callerCredentials = createCallerCredentialResolvers(services);
  koa.use(gitHttp(services, subjects, callerCredentials));
  // Before the routers of other paths: no ops route or upload lies under /api/v4 ('api' is a reserved
  // namespace), and an API request, the common case, need not be matched against them first.
  koa.use(
    apiMiddleware({
      backend,
      handlers,
      services,
      authenticator: services.authentication,
      subjects,
      credentials: createCredentialResolvers(services),
      callerCredentials,
      rateLimiter: services.rateLimiter,
      config,
    }),
  );
  koa.use(
    opsRouter(dataSource, metrics.registry, config.monitoringAllowlist, config.database.connectMs).routes(),
  );
  koa.use(uploadsWebRouter(services).routes());
  koa.use(() => {
    throw routeNotFound();
  });
  return { koa, services, events, stop: () => events.stop() };
}
