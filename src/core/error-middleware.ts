import type { Middleware } from 'koa';
import type { Logger } from '../logger.js';
import { ApiError, internalError } from './errors.js';
import { writeJson } from './http.js';

/** Turns every thrown error into GitLab's shape; faults are logged, never shown. */
export function errorMiddleware(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      let error = err instanceof ApiError ? err : undefined;
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
