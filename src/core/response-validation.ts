import type { Middleware } from 'koa';
import type { Logger } from '../logger.js';
import { operationById, type Backend } from './contract.js';
import { internalError } from './errors.js';
import { writeJson } from './http.js';

export interface ResponseCheck {
  operationId: string;
  method: string;
  path: string;
  status: number;
  valid: boolean;
  errors: string[];
}

/**
 * Checks every API response against the contract. Used by the test suite (and available to
 * operators): a response the spec does not describe becomes a 500, and `onCheck` hears of it.
 */
export function responseValidation(
  backend: Backend,
  logger: Logger,
  onCheck: (check: ResponseCheck) => void,
): Middleware {
  return async (ctx, next) => {
    await next();
    const operationId = ctx.state.operationId as string | undefined;
    // A connection already dropped (a body that never arrived) has no response to check.
    if (!operationId || ctx.req.socket.destroyed) return;
    const status = ctx.status;
    const errors: string[] = [];
    const operation = operationById(backend, operationId);
    const declared = operation?.responses?.[String(status)] ?? operation?.responses?.default;
    if (!declared) errors.push(`status ${status} is not declared`);
    else if (ctx.method !== 'HEAD' && typeof ctx.body === 'string') {
      if (ctx.response.get('Content-Type') !== 'application/json')
        errors.push('Content-Type is not application/json');
      const result = backend.validator.validateResponse(JSON.parse(ctx.body), operation!, status);
      for (const e of result.errors ?? []) errors.push(`${e.instancePath || '/'} ${e.message ?? e.keyword}`);
      const headers = backend.validator.validateResponseHeaders(ctx.response.headers, operation!, {
        statusCode: status,
      });
      for (const e of headers.errors ?? [])
        errors.push(`header ${e.instancePath || '/'} ${e.message ?? e.keyword}`);
    }
    const check = {
      operationId,
      method: ctx.method,
      path: ctx.path,
      status,
      valid: errors.length === 0,
      errors,
    };
    onCheck(check);
    if (!check.valid) {
      logger.error({ check }, 'response does not match the contract');
      const fault = internalError();
      writeJson(ctx, fault.status, fault.body);
    }
  };
}
