import Router, { type RouterContext } from '@koa/router';
import type { DataSource } from 'typeorm';
import type { Registry } from 'prom-client';

/** Health, readiness and metrics: the non-REST routes operators probe. */
export function opsRouter(dataSource: DataSource, registry: Registry): Router {
  const router = new Router();
  const json = (ctx: RouterContext, status: number, body: unknown) => {
    ctx.status = status;
    ctx.body = JSON.stringify(body);
    ctx.set('Content-Type', 'application/json');
  };
  router.get('/-/health', (ctx) => {
    ctx.state.route = 'health';
    ctx.type = 'text/plain';
    ctx.body = 'GitLab OK';
  });
  router.get('/-/liveness', (ctx) => {
    ctx.state.route = 'liveness';
    json(ctx, 200, { status: 'ok' });
  });
  router.get('/-/readiness', async (ctx) => {
    ctx.state.route = 'readiness';
    try {
      await dataSource.query('SELECT 1');
      json(ctx, 200, { status: 'ok', master_check: [{ status: 'ok' }], db_check: [{ status: 'ok' }] });
    } catch {
      json(ctx, 503, { status: 'failed', db_check: [{ status: 'failed', message: 'database unreachable' }] });
    }
  });
  router.get('/-/metrics', async (ctx) => {
    ctx.state.route = 'metrics';
    ctx.set('Content-Type', registry.contentType);
    ctx.body = await registry.metrics();
  });
  return router;
}
