/**
 * One rate-limit mechanism for every endpoint class: fixed windows counted per user (or per IP for
 * anonymous callers) and per class. Limits come from FORGE_RATE_LIMITS; a class without a rule is not
 * limited. Counters live in memory: one process serves one instance.
 */
import { ApiError } from './errors.js';

/** Whom a limit counts: the user, or the address of an anonymous caller. */
export const rateLimitSubject = (user: { id: number } | null, ip: string | undefined) =>
  user ? `user:${user.id}` : `ip:${ip ?? 'unknown'}`;

export interface RateLimitRule {
  limit: number;
  periodSeconds: number;
}

export type RateLimitRules = Record<string, RateLimitRule>;

/** GitLab's application limits that apply whatever the operator configures, unless overridden. */
export const DEFAULT_RATE_LIMITS: RateLimitRules = {
  repository_archive: { limit: 5, periodSeconds: 60 },
  large_blob: { limit: 5, periodSeconds: 60 },
};

/** `api_authenticated=2000/60,api_unauthenticated=500/60,repository_archive=off` */
export function parseRateLimits(spec: string | undefined): RateLimitRules {
  const rules: RateLimitRules = { ...DEFAULT_RATE_LIMITS };
  for (const entry of (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const match = /^([a-z_]+)=(?:(off)|(\d+)\/(\d+))$/.exec(entry);
    if (!match)
      throw new Error(`FORGE_RATE_LIMITS: cannot read "${entry}" (want class=limit/seconds or class=off)`);
    const [, name, off, limit, period] = match;
    if (off) delete rules[name];
    else {
      if (Number(limit) < 1 || Number(period) < 1)
        throw new Error(`FORGE_RATE_LIMITS: "${entry}" must be positive`);
      rules[name] = { limit: Number(limit), periodSeconds: Number(period) };
    }
  }
  return rules;
}

interface Window {
  startedAt: number;
  count: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(
    private readonly rules: RateLimitRules,
    private readonly now: () => number = Date.now,
  ) {}

  has(endpointClass: string): boolean {
    return endpointClass in this.rules;
  }

  /** Counts one request of `endpointClass` by `who`; throws 429 with GitLab's headers past the limit. */
  hit(endpointClass: string, who: string): void {
    const rule = this.rules[endpointClass];
    if (!rule) return;
    const now = this.now();
    const period = rule.periodSeconds * 1000;
    this.sweep(now);
    const key = `${endpointClass}\0${who}`;
    let window = this.windows.get(key);
    if (!window || now - window.startedAt >= period) {
      window = { startedAt: now - (now % period), count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    if (window.count <= rule.limit) return;
    const resetAt = window.startedAt + period;
    throw new ApiError(
      429,
      { message: 'Retry later' },
      {
        'Retry-After': String(Math.max(1, Math.ceil((resetAt - now) / 1000))),
        'RateLimit-Name': `throttle_${endpointClass}`,
        'RateLimit-Limit': String(rule.limit),
        'RateLimit-Observed': String(window.count),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(Math.ceil(resetAt / 1000)),
        'RateLimit-ResetTime': new Date(resetAt).toUTCString(),
      },
    );
  }

  /** Drops finished windows now and then, so idle callers do not accumulate. */
  private sweep(now: number) {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) {
      const rule = this.rules[key.slice(0, key.indexOf('\0'))];
      if (!rule || now - window.startedAt >= rule.periodSeconds * 1000) this.windows.delete(key);
    }
  }
}
