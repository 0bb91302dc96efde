/**
 * The pre-receive hook point: every ref change, pushed with `git push` or written through the API, is
 * asked of the checks families contribute (`contributes: { preReceiveChecks }`), so that protections,
 * push rules and code owners live in their families. After the refs moved, the push is published as
 * the `refs.updated` event: that is the post-receive point, and whatever reacts to pushes subscribes.
 */
import type { Caller } from '../core/auth.js';
import type { RefChange } from './ref-changes.js';

/** A push (or an API write) as the checks see it. */
export interface ReceivedPush {
  project: { id: number; defaultBranch: string | null };
  caller: Caller;
  /** The caller's access level in the project. */
  accessLevel: number;
  /**
   * Set for one who may not push code to the project but collaborates on merge requests from it: the
   * only branches they may update.
   */
  collaborationBranches?: Set<string>;
  /** API writes (GitLab's web updates) may delete protected refs; pushes never. */
  throughApi?: boolean;
  /** A merge request's merge: protected branches admit their merge entries, not their push entries. */
  merging?: boolean;
  /** The paths a change touches, for checks on content (read only when a check asks). */
  pathsOf?: (change: RefChange) => Promise<string[]>;
  /** The repository holding the new commits (and git's quarantine of a running push). */
  content?: { dir: string; env?: Record<string, string> };
}

/** When a check runs: ref protections, then the new commits' content, then checks of changed paths. */
export const PRE_RECEIVE_STAGES = ['refs', 'content', 'paths'] as const;
export type PreReceiveStage = (typeof PRE_RECEIVE_STAGES)[number];

export interface PreReceiveCheck {
  stage: PreReceiveStage;
  /** Why the push is refused (GitLab's message), or null; one refused ref refuses the whole push. */
  refusal(push: ReceivedPush, changes: RefChange[]): Promise<string | null>;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    preReceiveChecks: PreReceiveCheck;
  }
}

/** The first refusal of the checks, stage by stage, or null when every check admits the push. */
export async function preReceiveRefusal(
  checks: readonly PreReceiveCheck[],
  push: ReceivedPush,
  changes: RefChange[],
): Promise<string | null> {
  for (const stage of PRE_RECEIVE_STAGES)
    for (const check of checks.filter((candidate) => candidate.stage === stage)) {
      const reason = await check.refusal(push, changes);
      if (reason) return reason;
    }
  return null;
}
