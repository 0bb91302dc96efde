/** GitLab's rules for environments: slugs, tiers guessed from names, and a job's `environment:`. */
import crypto from 'node:crypto';
import { expandVariables } from '../ci_config/index.js';
import type { Job } from '../pipelines/pipeline.entity.js';
import { refSlug } from '../pipelines/predefined-variables.js';
import type { DeploymentStatus, EnvironmentTier } from './environment.entity.js';

const SUFFIX_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * GitLab's `generate_slug`: lowercase letters, digits and `-`, starting with a letter, at most 24
 * characters, no trailing `-`; when that changed the name, a random 6-character suffix keeps it unique.
 */
export function environmentSlug(name: string): string {
  let slug = name.toLowerCase().replace(/[^a-z0-9]/g, '-');
  if (!/^[a-z]/.test(slug)) slug = `env-${slug}`;
  slug = slug.replace(/-+/g, '-').slice(0, 24).replace(/-$/, '');
  if (slug === name) return slug;
  slug = slug.slice(0, 17);
  if (!slug.endsWith('-')) slug += '-';
  const bytes = crypto.randomBytes(6);
  return slug + [...bytes].map((b) => SUFFIX_CHARS[b % SUFFIX_CHARS.length]).join('');
}

/** GitLab's `guess_tier`: the first family of names that matches, in this order; else `other`. */
export function guessTier(name: string): EnvironmentTier {
  if (/(dev|review|trunk)/i.test(name)) return 'development';
  if (/(test|tst|int|ac(ce|)pt|qa|qc|control|quality)/i.test(name)) return 'testing';
  if (/(st(a|)g|mod(e|)l|pre|demo|non)/i.test(name)) return 'staging';
  if (/(pr(o|)d|live)/i.test(name)) return 'production';
  return 'other';
}

/** GitLab's `environment_name_regex`: letters, digits, spaces and `- _ / $ { } .`, not starting or ending with `/`. */
export const validEnvironmentName = (name: string) =>
  name.length > 0 && name.length <= 255 && /^[a-zA-Z0-9 \-_/${}.]+$/.test(name) && !/^\/|\/$/.test(name);

export type EnvironmentAction = 'start' | 'prepare' | 'stop' | 'verify' | 'access';

/** A job's `environment:` keyword as stored in its options. */
export interface JobEnvironment {
  name: string;
  url?: string;
  action: EnvironmentAction;
  onStop?: string;
  autoStopIn?: string;
  tier?: EnvironmentTier;
}

const ACTIONS: readonly string[] = ['start', 'prepare', 'stop', 'verify', 'access'];
const TIERS: readonly string[] = ['production', 'staging', 'testing', 'development', 'other'];

/** The job's environment with its name and url expanded; null for a job without one (most jobs). */
export function jobEnvironment(job: Job): JobEnvironment | null {
  const raw = job.options.environment as Record<string, unknown> | undefined;
  if (!raw || typeof raw.name !== 'string') return null;
  const variables = jobVariables(job);
  const name = expandVariables(raw.name, variables).trim();
  if (!validEnvironmentName(name)) return null;
  const action = typeof raw.action === 'string' && ACTIONS.includes(raw.action) ? raw.action : 'start';
  return {
    name,
    action: action as EnvironmentAction,
    ...(typeof raw.url === 'string' ? { url: expandVariables(raw.url, variables) } : {}),
    ...(typeof raw.on_stop === 'string' ? { onStop: raw.on_stop } : {}),
    ...(typeof raw.auto_stop_in === 'string' ? { autoStopIn: raw.auto_stop_in } : {}),
    ...(typeof raw.deployment_tier === 'string' && TIERS.includes(raw.deployment_tier)
      ? { tier: raw.deployment_tier as EnvironmentTier }
      : {}),
  };
}

/** The variables an environment's name and url expand with: the job's own and the predefined ones known from the job. */
function jobVariables(job: Job): Record<string, string> {
  return {
    ...job.yamlVariables,
    CI_PROJECT_ID: String(job.projectId),
    CI_PIPELINE_ID: String(job.pipelineId),
    CI_JOB_ID: String(job.id),
    CI_JOB_NAME: job.name,
    CI_JOB_STAGE: job.stage,
    CI_COMMIT_SHA: job.sha,
    CI_COMMIT_SHORT_SHA: job.sha.slice(0, 8),
    CI_COMMIT_REF_NAME: job.ref,
    CI_COMMIT_REF_SLUG: refSlug(job.ref),
    ...(job.tag ? { CI_COMMIT_TAG: job.ref } : { CI_COMMIT_BRANCH: job.ref }),
  };
}

/** The deployment status a job's status moves its deployment to (GitLab's `sync_status_with`); null: no move. */
export function deploymentStatusFor(jobStatus: string): DeploymentStatus | null {
  switch (jobStatus) {
    case 'running':
    case 'success':
    case 'failed':
    case 'canceled':
    case 'skipped':
      return jobStatus;
    default:
      return null;
  }
}

export const FINISHED_DEPLOYMENT: readonly DeploymentStatus[] = ['success', 'failed', 'canceled', 'skipped'];
