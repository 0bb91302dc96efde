import type { Middleware } from 'koa';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics: requests and their latency by operationId and status. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['operation_id', 'method', 'status'] as const;
  const requests = new Counter({
    name: 'forge_http_requests_total',
    help: 'HTTP requests handled, by operationId (or route) and status.',
    labelNames,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'forge_http_request_duration_seconds',
    help: 'HTTP request latency in seconds, by operationId (or route) and status.',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const middleware: Middleware = async (ctx, next) => {
    const end = latency.startTimer();
    try {
      await next();
    } finally {
      const labels = {
        operation_id:
          (ctx.state.operationId as string | undefined) ??
          (ctx.state.route as string | undefined) ??
          'unmatched',
        method: ctx.method,
        status: String(ctx.status),
      };
      requests.inc(labels);
      end(labels);
    }
  };
  return { registry, middleware };
}
