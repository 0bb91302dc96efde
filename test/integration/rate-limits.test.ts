import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({
  env: { FORGE_RATE_LIMITS: 'api_authenticated=3/60,api_unauthenticated=2/60' },
});

/** Windows are aligned to the clock, as Rack::Attack's are: a test starts far from the next boundary. */
async function awayFromWindowEdge(periodMs = 60_000, marginMs = 10_000) {
  const into = Date.now() % periodMs;
  if (into > periodMs - marginMs) await new Promise((resolve) => setTimeout(resolve, periodMs - into + 50));
}

describe('rate limits', () => {
  it('answer 429 past the limit of a user, with Retry-After and the RateLimit headers', async () => {
    const user = await server.factories.user();
    await awayFromWindowEdge();
    for (let i = 0; i < 3; i += 1) {
      expect((await server.request('GET', '/projects', { token: user.token })).status).toBe(200);
    }
    const limited = await server.request('GET', '/projects', { token: user.token });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ message: 'Retry later' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('ratelimit-name')).toBe('throttle_api_authenticated');
    expect(limited.headers.get('ratelimit-limit')).toBe('3');
    expect(limited.headers.get('ratelimit-observed')).toBe('4');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    const reset = Number(limited.headers.get('ratelimit-reset'));
    expect(reset * 1000).toBeGreaterThan(Date.now());
    expect(limited.headers.get('ratelimit-resettime')).toMatch(/GMT$/);

    // Counted per user: someone else is not affected.
    const other = await server.factories.user();
    expect((await server.request('GET', '/projects', { token: other.token })).status).toBe(200);
  });

  it('count anonymous callers per address in their own class', async () => {
    await awayFromWindowEdge();
    expect((await server.request('GET', '/projects')).status).toBe(200);
    expect((await server.request('GET', '/projects')).status).toBe(200);
    const limited = await server.request('GET', '/projects');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('ratelimit-name')).toBe('throttle_api_unauthenticated');
  });
});
