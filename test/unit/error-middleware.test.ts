import Koa from 'koa';
import type { AddressInfo } from 'node:net';
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
