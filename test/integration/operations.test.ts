import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { nextInternalId } from '../../src/db/internal-ids.js';
import { createLogger } from '../../src/logger.js';
import { openTestDatabase } from '../helpers/database.js';
import { send, useTestServer } from '../helpers/server.js';

const server = useTestServer();

describe('health, readiness and metrics', () => {
  it('answers health and readiness', async () => {
    const health = await send(`${server.url}/-/health`, 'GET');
    expect(health.status).toBe(200);
    const readiness = await send(`${server.url}/-/readiness`, 'GET');
    expect(readiness.status).toBe(200);
    expect(readiness.headers.get('content-type')).toBe('application/json');
    expect(readiness.body).toMatchObject({ status: 'ok', db_check: [{ status: 'ok' }] });
  });

  it('reports not ready, with 503, when the database does not answer', async () => {
    const database = await openTestDatabase();
    const { koa } = await createApp({
      config: loadConfig({ PORT: '0' }),
      dataSource: database.dataSource,
      logger: createLogger('silent'),
    });
    const http = koa.listen(0, '127.0.0.1');
    await new Promise((resolve) => http.once('listening', resolve));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/-/readiness`;
    try {
      expect((await send(url, 'GET')).status).toBe(200);
      await database.drop();
      const down = await send(url, 'GET');
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ status: 'failed', db_check: [{ status: 'failed' }] });
    } finally {
      http.close();
    }
  });

  it('counts requests and latency by operationId and status', async () => {
    await server.request('GET', '/projects');
    await server.request('GET', '/projects/999999');
    const metrics = await send(`${server.url}/-/metrics`, 'GET');
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(metrics.text).toMatch(
      /forge_http_requests_total\{operation_id="listProjects",method="GET",status="200"\} \d+/,
    );
    expect(metrics.text).toMatch(
      /forge_http_requests_total\{operation_id="getProject",method="GET",status="404"\} \d+/,
    );
    expect(metrics.text).toMatch(
      /forge_http_request_duration_seconds_bucket\{le="0.1",operation_id="listProjects"/,
    );
  });
});

describe('per-project internal ids', () => {
  it('are distinct and gapless under concurrent creates', async () => {
    const project = await server.factories.project();
    const values = await Promise.all(
      Array.from({ length: 40 }, () =>
        server.dataSource.transaction((tx) => nextInternalId(tx, project.id, 'merge_requests')),
      ),
    );
    expect([...values].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(await nextInternalId(server.dataSource.manager, project.id, 'issues')).toBe(1);
  });

  it('are rolled back with the transaction that took them', async () => {
    const project = await server.factories.project();
    await expect(
      server.dataSource.transaction(async (tx) => {
        await nextInternalId(tx, project.id, 'pipelines');
        throw new Error('abandon');
      }),
    ).rejects.toThrow('abandon');
    expect(await nextInternalId(server.dataSource.manager, project.id, 'pipelines')).toBe(1);
  });
});
