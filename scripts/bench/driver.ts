/**
 * The benchmark's load driver: an open loop at a fixed offered rate and a closed loop for maximum
 * throughput, over node:http with keep-alive agents.
 *
 * Written here rather than taken from npm (autocannon, k6) because the open loop must count latency
 * from when each request was DUE, not from when it was sent: a driver that waits for a slow response
 * before sending the next one hides the queueing a slow server causes (coordinated omission).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

/** Nearest-rank percentile of ascending-sorted values; `p` in (0, 100]. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1];
}

export interface Summary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarize(latencies: readonly number[]): Summary {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

/** When each request of an open loop is due, in ms from the loop's start: a fixed timeline. */
export function schedule(rate: number, seconds: number): number[] {
  const count = Math.max(1, Math.round(rate * seconds));
  return Array.from({ length: count }, (_, i) => (i * 1000) / rate);
}

export interface Target {
  url: string;
  headers?: Record<string, string>;
  /** Cold mode: the URL of each request, a different one every time; `url` is then only its name. */
  next?: () => string;
}

export const newAgent = (maxSockets: number) => new http.Agent({ keepAlive: true, maxSockets });

/** One GET, body read to the end; resolves with the status (0 on a transport error). */
export function get(
  target: Target,
  agent: http.Agent,
  sent?: (request: http.ClientRequest) => void,
): Promise<number> {
  return new Promise((resolve) => {
    const url = target.next ? target.next() : target.url;
    const request = http.get(url, { agent, headers: target.headers }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    request.on('error', () => resolve(0));
    sent?.(request);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface OpenLoopResult extends Summary {
  rate: number;
  /** Responses other than 2xx, and transport errors. */
  errors: number;
  /** Requests still unanswered when the drain time ran out; counted at their age then (a lower bound). */
  unfinished: number;
}

/**
 * Sends requests on a fixed timeline at `rate` per second for `seconds`, whatever the server's pace,
 * and counts each latency from its due time. Waits at most `drainMs` after the last one is due.
 *
 * At most `maxSockets` requests are at the server at once; the rest wait in the agent, where their
 * latency still counts. When the drain time runs out, waiting requests are cancelled and the loop
 * returns; `settled` resolves once the server has answered those it was given (at most `maxSockets`),
 * so that the next measurement starts on an idle server.
 */
export async function openLoop(
  target: Target,
  options: { rate: number; seconds: number; drainMs: number; maxSockets?: number },
): Promise<OpenLoopResult & { settled: Promise<void> }> {
  const agent = newAgent(options.maxSockets ?? 8);
  const due = schedule(options.rate, options.seconds);
  const latencies: number[] = new Array(due.length).fill(NaN);
  const requests: http.ClientRequest[] = [];
  let errors = 0;
  const start = performance.now() + 5;
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < due.length; i++) {
    const at = start + due[i];
    const wait = at - performance.now();
    if (wait > 0.5) await sleep(wait);
    inFlight.push(
      get(target, agent, (request) => requests.push(request)).then((status) => {
        if (!Number.isNaN(latencies[i])) return;
        latencies[i] = performance.now() - at;
        if (status < 200 || status > 299) errors++;
      }),
    );
  }
  const lastDue = start + due[due.length - 1];
  await Promise.race([
    Promise.all(inFlight),
    sleep(Math.max(0, lastDue + options.drainMs - performance.now())),
  ]);
  const now = performance.now();
  let unfinished = 0;
  for (let i = 0; i < latencies.length; i++) {
    if (Number.isNaN(latencies[i])) {
      unfinished++;
      latencies[i] = now - (start + due[i]);
    }
  }
  const result = { ...summarize(latencies), rate: options.rate, errors, unfinished };
  // Requests the agent has not handed to a socket yet never reach the server.
  for (const request of requests) if (!request.socket) request.destroy();
  const settled = Promise.all(inFlight).then(() => agent.destroy());
  return { ...result, settled };
}

export interface ClosedLoopResult {
  connections: number;
  seconds: number;
  completed: number;
  errors: number;
  /** Completed requests per second. */
  throughput: number;
  p50: number;
}

/** `connections` workers, each sending its next request as soon as the last one is answered. */
export async function closedLoop(
  target: Target,
  options: { connections: number; seconds: number },
): Promise<ClosedLoopResult> {
  const agent = newAgent(options.connections);
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + options.seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const sent = performance.now();
      const status = await get(target, agent);
      latencies.push(performance.now() - sent);
      if (status < 200 || status > 299) errors++;
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  return {
    connections: options.connections,
    seconds: elapsed,
    completed: latencies.length,
    errors,
    throughput: latencies.length / elapsed,
    p50: summarize(latencies).p50,
  };
}

/** Runs `fn` over `items` with at most `concurrency` at once; results in input order. */
export async function pool<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
