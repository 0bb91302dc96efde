/** The benchmark driver's arithmetic: nearest-rank percentiles, the open loop's timeline, `times` parsing. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { openLoop, percentile, schedule, summarize } from '../../scripts/bench/driver.js';
import { parseTimes } from '../../scripts/bench/floors.js';

const oneToHundred = Array.from({ length: 100 }, (_, i) => i + 1);

describe('percentile (nearest rank)', () => {
  it.each([
    [oneToHundred, 50, 50],
    [oneToHundred, 90, 90],
    [oneToHundred, 99, 99],
    [oneToHundred, 100, 100],
    [[7], 50, 7],
    [[7], 99, 7],
    [[1, 2], 50, 1],
    [[1, 2], 51, 2],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90, 9],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99, 10],
  ])('of %j at p%d is %d', (values, p, expected) => {
    expect(percentile(values, p)).toBe(expected);
  });

  it('is NaN for no values', () => {
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarize sorts its input first', () => {
    const shuffled = [...oneToHundred].reverse();
    expect(summarize(shuffled)).toEqual({ count: 100, p50: 50, p90: 90, p99: 99, max: 100 });
  });
});

describe('schedule', () => {
  it('spaces requests evenly at the offered rate', () => {
    expect(schedule(4, 1)).toEqual([0, 250, 500, 750]);
    expect(schedule(20, 5)).toHaveLength(100);
  });
});

describe('parseTimes', () => {
  it("adds the children's user and system time (second line)", () => {
    expect(parseTimes('0m0.004s 0m0.002s\n1m2.500s 0m0.250s\n')).toBeCloseTo(62_750, 6);
  });
});

describe('openLoop', () => {
  it('counts latency from when a request was due, so a stalled server shows in every later request', async () => {
    // The server answers one request at a time, each after 100 ms: at 20 req/s offered the queue
    // grows, and latency from the due time grows with it. A closed-loop driver would report ~100 ms.
    let busyUntil = 0;
    const server = http.createServer((_req, res) => {
      const now = Date.now();
      busyUntil = Math.max(busyUntil, now) + 100;
      setTimeout(() => res.end('ok'), busyUntil - now);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const result = await openLoop({ url }, { rate: 20, seconds: 0.5, drainMs: 5_000 });
      expect(result.count).toBe(10);
      expect(result.errors).toBe(0);
      expect(result.unfinished).toBe(0);
      // The tenth request is due at 450 ms and answered at about 1,000 ms.
      expect(result.max).toBeGreaterThan(450);
      expect(result.p50).toBeGreaterThan(150);
    } finally {
      server.close();
    }
  });
});
