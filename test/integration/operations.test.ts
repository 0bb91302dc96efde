import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createBackend } from '../../src/core/contract.js';
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

describe('the monitoring IP allowlist', () => {
  // The test client always connects from 127.0.0.1; X-Forwarded-For plays a client behind a local proxy.
  const cases: Array<{ allowlist?: string; forwardedFor?: string; status: number }> = [
    { status: 200 },
    { forwardedFor: '203.0.113.7', status: 404 },
    { forwardedFor: '203.0.113.7, 127.0.0.1', status: 404 },
    { allowlist: '203.0.113.0/24', forwardedFor: '203.0.113.7', status: 200 },
    { allowlist: '203.0.113.0/24', status: 404 },
    { allowlist: '203.0.113.0/24', forwardedFor: '198.51.100.1', status: 404 },
    { allowlist: '', status: 404 },
    { allowlist: '::1,127.0.0.0/8,203.0.113.7', forwardedFor: '203.0.113.7', status: 200 },
  ];
  const backend = createBackend();

  it.each(cases)(
    'FORGE_MONITORING_ALLOWLIST=$allowlist, X-Forwarded-For $forwardedFor → $status',
    async ({ allowlist, forwardedFor, status }) => {
      const env: Record<string, string> = { PORT: '0' };
      if (allowlist !== undefined) env.FORGE_MONITORING_ALLOWLIST = allowlist;
      const { koa } = await createApp({
        config: loadConfig(env),
        dataSource: server.dataSource,
        logger: createLogger('silent'),
        backend: await backend,
      });
      const http = koa.listen(0, '127.0.0.1');
      await new Promise((resolve) => http.once('listening', resolve));
      const root = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
      try {
        const headers: Record<string, string> = forwardedFor ? { 'X-Forwarded-For': forwardedFor } : {};
        const metrics = await send(`${root}/-/metrics`, 'GET', { headers });
        expect(metrics.status).toBe(status);
        if (status === 200) expect(metrics.text).toContain('forge_http_requests_total');
        else expect(metrics.body).toEqual({ error: '404 Not Found' });
        // Only metrics are restricted: health stays open to probes from anywhere.
        expect((await send(`${root}/-/health`, 'GET', { headers })).status).toBe(200);
      } finally {
        http.close();
      }
    },
  );

  it('refuses to start with a malformed entry', () => {
    expect(() => loadConfig({ FORGE_MONITORING_ALLOWLIST: '127.0.0.1,localhost' })).toThrow(
      'FORGE_MONITORING_ALLOWLIST: "localhost" is not an IP address or CIDR range',
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
