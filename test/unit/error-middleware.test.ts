import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { QueryFailedError } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { errorMiddleware } from '../../src/core/error-middleware.js';
import { ApiError, notFound } from '../../src/core/errors.js';
import { createLogger } from '../../src/logger.js';

async function respond(fault: () => never) {
  const app = new Koa();
  app.use(errorMiddleware(createLogger('silent')));
  app.use(() => fault());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const result = {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
  };
  server.close();
  return result;
}

describe('error middleware', () => {
  it('hides an unexpected fault behind a bare 500', async () => {
    const result = await respond(() => {
      throw new Error('connection to 10.0.0.5 refused at /srv/app/db.ts:12');
    });
    expect(result).toEqual({
      status: 500,
      type: 'application/json',
      text: '{"message":"500 Internal Server Error"}',
    });
  });

  it('answers 503 when the database is unreachable or too slow, and 500 when it refuses a statement', async () => {
    const failed = (code: string, message = 'failed') =>
      new QueryFailedError('SELECT 1', [], Object.assign(new Error(message), { code }));
    const unavailable = [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
        code: 'ECONNREFUSED',
        syscall: 'connect',
      }),
      new AggregateError(
        [Object.assign(new Error('refused'), { code: 'ECONNREFUSED', syscall: 'connect' })],
        '',
      ),
      failed('ECONNRESET', 'read ECONNRESET'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Query read timeout'),
      failed('57014', 'canceling statement due to statement timeout'),
      failed('57P01', 'terminating connection due to administrator command'),
      failed('08006'),
    ];
    for (const err of unavailable) {
      expect(
        await respond(() => {
          throw err;
        }),
        err.message,
      ).toEqual({
        status: 503,
        type: 'application/json',
        text: '{"message":"503 Service Unavailable"}',
      });
    }
    const refused = [
      failed('23505', 'duplicate key'),
      // A client that hung up is not the database.
      Object.assign(new Error('aborted'), { code: 'ECONNRESET' }),
    ];
    for (const err of refused) {
      const result = await respond(() => {
        throw err;
      });
      expect(result.status, err.message).toBe(500);
    }
  });

  it('writes an ApiError in its own shape and status', async () => {
    const result = await respond(() => {
      throw notFound('Project');
    });
    expect(result).toEqual({
      status: 404,
      type: 'application/json',
      text: '{"message":"404 Project Not Found"}',
    });
  });

  it('keeps an ApiError’s headers', async () => {
    const app = new Koa();
    app.use(errorMiddleware(createLogger('silent')));
    app.use(() => {
      throw new ApiError(429, { message: 'Retry later' }, { 'Retry-After': '30' });
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    server.close();
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('30');
  });
});
