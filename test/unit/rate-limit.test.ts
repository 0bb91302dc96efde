import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { DEFAULT_RATE_LIMITS, parseRateLimits, RateLimiter } from '../../src/core/rate-limit.js';

describe('parseRateLimits', () => {
  it('starts from GitLab’s application limits and lets the operator change or drop them', () => {
    expect(parseRateLimits(undefined)).toEqual(DEFAULT_RATE_LIMITS);
    expect(parseRateLimits('api_authenticated=2000/60, repository_archive=off,large_blob=10/30')).toEqual({
      api_authenticated: { limit: 2000, periodSeconds: 60 },
      large_blob: { limit: 10, periodSeconds: 30 },
    });
  });

  it.each(['api_authenticated', 'api=1', 'api=1/0', 'api=x/60', 'API=1/60'])('refuses %j', (spec) => {
    expect(() => parseRateLimits(spec)).toThrow(/FORGE_RATE_LIMITS/);
  });
});

describe('RateLimiter', () => {
  it('counts fixed windows per class and caller, and opens again when the window ends', () => {
    let now = 120_000;
    const limiter = new RateLimiter({ archive: { limit: 2, periodSeconds: 60 } }, () => now);
    limiter.hit('archive', 'user:1');
    limiter.hit('archive', 'user:1');
    limiter.hit('archive', 'user:2');
    limiter.hit('unlimited', 'user:1');
    let refused: unknown;
    try {
      limiter.hit('archive', 'user:1');
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(429);
    expect((refused as ApiError).headers['Retry-After']).toBe('60');
    now += 59_000;
    expect(() => limiter.hit('archive', 'user:1')).toThrow();
    expect(
      (() => {
        try {
          limiter.hit('archive', 'user:1');
        } catch (err) {
          return (err as ApiError).headers['Retry-After'];
        }
      })(),
    ).toBe('1');
    now += 1_000;
    expect(() => limiter.hit('archive', 'user:1')).not.toThrow();
    expect(limiter.has('archive')).toBe(true);
    expect(limiter.has('unlimited')).toBe(false);
  });
});
