import type { components } from '../../generated/openapi.js';
import type { RemoteMirror } from './remote-mirror.entity.js';
import { hostKeyFingerprints } from './remote-mirrors.service.js';

type RemoteMirrorJson = components['schemas']['RemoteMirror'];

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** A mirror as GitLab shows it: the URL is stored masked, so no secret can reach the response. */
export function presentRemoteMirror(mirror: RemoteMirror, branchRegexShown: boolean): RemoteMirrorJson {
  return {
    id: mirror.id,
    enabled: mirror.enabled,
    auth_method: mirror.authMethod,
    url: mirror.url,
    update_status: mirror.updateStatus,
    last_error: mirror.lastError,
    last_update_at: iso(mirror.lastUpdateAt),
    last_update_started_at: iso(mirror.lastUpdateStartedAt),
    last_successful_update_at: iso(mirror.lastSuccessfulUpdateAt),
    only_protected_branches: mirror.onlyProtectedBranches,
    keep_divergent_refs: mirror.keepDivergentRefs,
    ...(branchRegexShown ? { mirror_branch_regex: mirror.mirrorBranchRegex } : {}),
    host_keys: hostKeyFingerprints(mirror.sshKnownHosts).map((fingerprint) => ({
      fingerprint_sha256: fingerprint,
    })),
  };
}
