import path from 'node:path';
import { DEFAULT_QUEUE_SETTINGS, type QueueSettings } from './core/queue.js';
import { parseRateLimits, type RateLimitRules } from './core/rate-limit.js';
import type { DatabaseTimeouts } from './db/timeouts.js';
import { parseStorages, type Storages } from './git/storage.js';
import type { ObjectStoreConfig } from './core/object-store.js';
import { DEFAULT_MONITORING_ALLOWLIST, parseIpAllowlist, type IpAllowlist } from './ops/allowlist.js';

/** Every setting comes from the environment; see the README's configuration table. */
export interface Config {
  port: number;
  host: string;
  databaseUrl?: string;
  dataDir: string;
  externalUrl: string;
  logLevel: string;
  rootToken?: string;
  rateLimits: RateLimitRules;
  /** Repository storages by name; `default` is always one of them. */
  storages: Storages;
  /** The job queue's expiry and polling. */
  queue: QueueSettings;
  /** Who may read `/-/metrics` (GitLab's monitoring IP allowlist); everyone else gets 404. */
  monitoringAllowlist: IpAllowlist;
  /** The GitLab tier the instance behaves as: operations and attributes of a higher tier are absent. */
  tier: Tier;
  /**
   * Seconds a request's headers, and an API request's whole body, may take to arrive; a git push may
   * take as long as it needs, but may not pause for longer than this.
   */
  bodyTimeoutSeconds: number;
  /** How long anything waits for the database before the request answers 503. */
  database: DatabaseTimeouts;
  /** Key material for secrets kept in the database (mirror credentials); see the README. */
  secretKey?: string;
  /** GitLab's `allow_local_requests_from_web_hooks_and_services`: mirrors may point at local addresses. */
  allowLocalRequests: boolean;
  /** GitLab's `allow_runner_registration_token`: runners may register with a registration token (default true). */
  allowRunnerRegistrationToken: boolean;
  /**
   * GitLab feature flags that are off by default and turned on here (`FORGE_FEATURES`, comma-separated),
   * for example `mr_approved_filter`.
   */
  features: Set<string>;
  /** Where job artifacts, finished traces (later registry blobs and packages) are kept; see the README. */
  objectStore: ObjectStoreConfig;
}

export const TIERS = ['free', 'premium', 'ultimate'] as const;
export type Tier = (typeof TIERS)[number];

function parseTier(value: string | undefined): Tier {
  if (!value) return 'ultimate';
  const tier = TIERS.find((name) => name === value.toLowerCase());
  if (!tier) throw new Error(`FORGE_TIER must be one of ${TIERS.join(', ')}: ${value}`);
  return tier;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT is not a valid port: ${env.PORT}`);
  const dataDir = path.resolve(env.DATA_DIR ?? './data');
  const externalUrl = (env.EXTERNAL_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  return {
    port,
    host: env.HOST ?? '0.0.0.0',
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir,
    externalUrl,
    logLevel: env.LOG_LEVEL ?? 'info',
    rootToken: env.FORGE_ROOT_TOKEN || undefined,
    secretKey: env.FORGE_SECRET_KEY || undefined,
    allowLocalRequests: /^(1|true|yes)$/i.test(env.FORGE_ALLOW_LOCAL_REQUESTS ?? ''),
    allowRunnerRegistrationToken: !/^(0|false|no)$/i.test(env.FORGE_ALLOW_RUNNER_REGISTRATION_TOKEN ?? ''),
    rateLimits: parseRateLimits(env.FORGE_RATE_LIMITS),
    storages: parseStorages(env.FORGE_STORAGES, dataDir),
    objectStore: { kind: 'file', dir: path.join(dataDir, 'objects') },
    tier: parseTier(env.FORGE_TIER),
    features: new Set(
      (env.FORGE_FEATURES ?? '')
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
    bodyTimeoutSeconds: seconds(env, 'FORGE_BODY_TIMEOUT', 30, 1),
    monitoringAllowlist: parseIpAllowlist(
      env.FORGE_MONITORING_ALLOWLIST ?? DEFAULT_MONITORING_ALLOWLIST,
      'FORGE_MONITORING_ALLOWLIST',
    ),
    database: {
      connectMs: Math.round(seconds(env, 'FORGE_DB_CONNECT_TIMEOUT', 5, 0.1) * 1000),
      statementMs: Math.round(seconds(env, 'FORGE_DB_STATEMENT_TIMEOUT', 15, 0.1) * 1000),
    },
    queue: {
      expireInSeconds: Math.round(
        seconds(env, 'FORGE_JOB_EXPIRY', DEFAULT_QUEUE_SETTINGS.expireInSeconds, 1),
      ),
      pollingIntervalSeconds: seconds(
        env,
        'FORGE_JOB_POLL',
        DEFAULT_QUEUE_SETTINGS.pollingIntervalSeconds,
        0.5,
      ),
    },
  };
}

function seconds(env: NodeJS.ProcessEnv, name: string, fallback: number, minimum: number): number {
  const text = env[name];
  if (!text) return fallback;
  const value = Number(text);
  // Under a day: pg-boss refuses longer expiries, and no other wait here needs more.
  if (!Number.isFinite(value) || value < minimum || value >= 86400)
    throw new Error(`${name} must be a number of seconds from ${minimum} to under 86400: ${text}`);
  return value;
}
