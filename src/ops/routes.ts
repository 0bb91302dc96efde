import Router from '@koa/router';
import { routeNotFound } from '../core/errors.js';
import { writeJson } from '../core/http.js';
import { clientAddress, type IpAllowlist } from './allowlist.js';
import type { DataSource } from 'typeorm';
import type { Registry } from 'prom-client';

/**
 * Health, readiness and metrics: the non-REST routes operators probe. Metrics answer only the monitoring
 * allowlist; anyone else gets the 404 of a route that does not exist, as GitLab answers.
 */
export function opsRouter(
  dataSource: DataSource,
  registry: Registry,
  monitoring: IpAllowlist,
  readinessTimeoutMs: number,
): Router {
  const router = new Router();
  router.get('/-/health', (ctx) => {
    ctx.state.route = 'health';
    ctx.type = 'text/plain';
    ctx.body = 'GitLab OK';
  });
  router.get('/-/liveness', (ctx) => {
    ctx.state.route = 'liveness';
    writeJson(ctx, 200, { status: 'ok' });
  });
  router.get('/-/readiness', async (ctx) => {
    ctx.state.route = 'readiness';
    let timer: NodeJS.Timeout | undefined;
    try {
      // A probe wants its answer in seconds; the query itself is left to its own timeouts.
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer in time')), readinessTimeoutMs);
      });
      await Promise.race([dataSource.query('SELECT 1'), late]);
      writeJson(ctx, 200, { status: 'ok', master_check: [{ status: 'ok' }], db_check: [{ status: 'ok' }] });
    } catch {
      writeJson(ctx, 503, {
        status: 'failed',
        db_check: [{ status: 'failed', message: 'database unreachable' }],
      });
    } finally {
      clearTimeout(timer);
    }
  });
  router.get('/-/metrics', async (ctx) => {
    ctx.state.route = 'metrics';
    const client = clientAddress(ctx.req.socket.remoteAddress ?? '', ctx.get('X-Forwarded-For'));
    if (!monitoring.allows(client)) throw routeNotFound();
    ctx.set('Content-Type', registry.contentType);
    ctx.body = await registry.metrics();
  });
  return router;
}
