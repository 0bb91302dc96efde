import type { Middleware } from 'koa';
import type { Logger } from '../logger.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { ApiError, internalError, serviceUnavailable } from './errors.js';
import { writeJson } from './http.js';

/**
 * Turns every thrown error into GitLab's shape; faults are logged, never shown. A database that does
 * not answer is an outage, not a fault of this request: 503, logged once as a line, not a stack.
 */
export function errorMiddleware(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      let error = err instanceof ApiError ? err : undefined;
      if (!error && isDatabaseUnavailable(err)) {
        logger.warn(
          { reason: (err as Error).message, requestId: ctx.state.requestId },
          'database unavailable',
        );
        error = serviceUnavailable();
      }
      if (!error) {
        logger.error(
          { err, requestId: ctx.state.requestId, operationId: ctx.state.operationId },
          'request failed',
        );
        error = internalError();
      }
      writeJson(ctx, error.status, error.body, error.headers);
    }
  };
}
