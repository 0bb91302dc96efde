/**
 * The runner's settings, from flags (`--url`, `--token`, ...) or the environment (FORGE_RUNNER_*). The
 * built-in runner of `make run` (FORGE_BUILTIN_RUNNER=true) registers itself: see register.ts.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface RunnerSettings {
  url: string;
  token?: string;
  /** Create an instance runner with the root token when there is no token (and save it). */
  register: boolean;
  rootToken?: string;
  dataDir: string;
  tokenFile: string;
  concurrency: number;
  buildsDir: string;
  cacheDir: string;
  user?: string;
  systemId: string;
  description: string;
  tagList: string;
  intervalMs: number;
}

const FLAGS: Record<string, string> = {
  '--url': 'FORGE_RUNNER_URL',
  '--token': 'FORGE_RUNNER_TOKEN',
  '--concurrency': 'FORGE_RUNNER_CONCURRENCY',
  '--builds-dir': 'FORGE_RUNNER_BUILDS_DIR',
  '--cache-dir': 'FORGE_RUNNER_CACHE_DIR',
  '--user': 'FORGE_RUNNER_USER',
  '--description': 'FORGE_RUNNER_DESCRIPTION',
  '--tag-list': 'FORGE_RUNNER_TAG_LIST',
  '--update-interval': 'FORGE_RUNNER_UPDATE_INTERVAL',
};

export function parseArgs(argv: string[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (flag === '--register') {
      out.FORGE_RUNNER_REGISTER = 'true';
      continue;
    }
    const key = FLAGS[flag];
    if (!key)
      throw new Error(`unknown option ${argv[i]} (options: --register ${Object.keys(FLAGS).join(' ')})`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    out[key] = value;
  }
  return out;
}

const truthy = (value: string | undefined) => /^(1|true|yes)$/i.test(value ?? '');

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number: ${value}`);
  return n;
}

/** GitLab Runner's system ID: `s_` and 12 hex digits, kept in a file so that it survives restarts. */
function systemId(dir: string): string {
  const file = path.join(dir, 'system_id');
  try {
    const saved = fs.readFileSync(file, 'utf8').trim();
    if (/^s_[0-9a-f]{12}$/.test(saved)) return saved;
  } catch {
    // none yet
  }
  const id = `s_${crypto.randomBytes(6).toString('hex')}`;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, `${id}\n`);
  return id;
}

export function loadRunnerSettings(env: NodeJS.ProcessEnv): RunnerSettings {
  const dataDir = path.resolve(env.DATA_DIR ?? './data');
  const runnerDir = path.join(dataDir, 'runner');
  const port = env.PORT ?? '8080';
  const url = (env.FORGE_RUNNER_URL ?? env.EXTERNAL_URL ?? `http://localhost:${port}`)
    .replace(/\/+$/, '')
    .replace(/\/api\/v4$/, '');
  const concurrency = positive('FORGE_RUNNER_CONCURRENCY', env.FORGE_RUNNER_CONCURRENCY, 2);
  if (!Number.isInteger(concurrency) || concurrency > 64)
    throw new Error('FORGE_RUNNER_CONCURRENCY must be an integer from 1 to 64');
  const register = truthy(env.FORGE_RUNNER_REGISTER) || truthy(env.FORGE_BUILTIN_RUNNER);
  return {
    url,
    token: env.FORGE_RUNNER_TOKEN || undefined,
    register,
    rootToken: env.FORGE_ROOT_TOKEN || undefined,
    dataDir,
    tokenFile: path.join(runnerDir, 'token'),
    concurrency,
    buildsDir: path.resolve(env.FORGE_RUNNER_BUILDS_DIR ?? path.join(runnerDir, 'builds')),
    cacheDir: path.resolve(env.FORGE_RUNNER_CACHE_DIR ?? path.join(runnerDir, 'cache')),
    user: env.FORGE_RUNNER_USER || undefined,
    systemId: env.FORGE_RUNNER_SYSTEM_ID || systemId(runnerDir),
    description: env.FORGE_RUNNER_DESCRIPTION ?? 'forge-api built-in shell runner',
    tagList: env.FORGE_RUNNER_TAG_LIST ?? '',
    intervalMs: positive('FORGE_RUNNER_UPDATE_INTERVAL', env.FORGE_RUNNER_UPDATE_INTERVAL, 3) * 1000,
  };
}
