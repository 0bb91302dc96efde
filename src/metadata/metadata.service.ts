import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { components } from '../../generated/openapi.js';
import type { Tier } from '../config.js';
import { checkoutRevision } from '../git/checkout.js';

export type InstanceMetadata = components['schemas']['Metadata'];

/**
 * The GitLab release whose REST API forge-api implements (the newest release its contract follows).
 * `version` reports it first, so that clients comparing GitLab versions compare this.
 */
export const GITLAB_API_VERSION = '18.1.0';

/** The checkout or installation root: from src/metadata/ two levels up, from dist/src/metadata/ three. */
const ROOT_CANDIDATES = ['../..', '../../..'].map((up) => fileURLToPath(new URL(`${up}/`, import.meta.url)));

async function readIfPresent(file: string): Promise<string | undefined> {
  return fs.readFile(file, 'utf8').catch(() => undefined);
}

async function packageRoot(): Promise<{ root: string; version: string }> {
  for (const root of ROOT_CANDIDATES) {
    const text = await readIfPresent(path.join(root, 'package.json'));
    const manifest = text ? (JSON.parse(text) as { name?: string; version?: string }) : undefined;
    if (manifest?.name === 'forge-api' && manifest.version) return { root, version: manifest.version };
  }
  throw new Error('forge-api: package.json not found beside the code');
}

/**
 * As GitLab's `Gitlab.revision`: the REVISION file the build wrote (dist/REVISION, `make build`), else the
 * checkout's last commit, else `Unknown`.
 */
async function revision(root: string): Promise<string> {
  const recorded = await readIfPresent(fileURLToPath(new URL('../../REVISION', import.meta.url)));
  if (recorded?.trim()) return recorded.trim();
  if (!(await fs.stat(path.join(root, '.git')).catch(() => undefined))) return 'Unknown';
  return (await checkoutRevision(root)) ?? 'Unknown';
}

let cached: Promise<Omit<InstanceMetadata, 'enterprise'>> | undefined;

/** What the instance is; it does not change while the process runs, so it is worked out once. */
export async function instanceMetadata(tier: Tier): Promise<InstanceMetadata> {
  cached ??= (async () => {
    const { root, version } = await packageRoot();
    return {
      version: `${GITLAB_API_VERSION}-forge-${version}`,
      revision: await revision(root),
      // No agent server for Kubernetes runs beside forge-api.
      kas: { enabled: false, externalUrl: null, externalK8sProxyUrl: null, version: null },
    };
  })();
  // The Premium and Ultimate parts of the API are served above the Free tier, as GitLab EE does.
  return { ...(await cached), enterprise: tier !== 'free' };
}

/** The instance as `/metadata` describes it, for this instance's tier. */
export class MetadataService {
  constructor(private readonly tier: Tier) {}

  describe(): Promise<InstanceMetadata> {
    return instanceMetadata(this.tier);
  }
}
