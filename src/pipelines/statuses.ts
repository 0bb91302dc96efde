/**
 * GitLab's status arithmetic (lib/gitlab/ci/status/composite.rb) and how each status is shown
 * (lib/gitlab/ci/status/*.rb), as pure functions.
 */
import type { CiStatus } from './pipeline.entity.js';

export const ACTIVE_STATUSES: readonly CiStatus[] = [
  'preparing',
  'pending',
  'running',
  'waiting_for_resource',
];
export const COMPLETED_STATUSES: readonly CiStatus[] = ['success', 'failed', 'canceled', 'skipped'];
/** Statuses a job can be canceled from (GitLab's `cancelable?`). */
export const CANCELABLE_STATUSES: readonly CiStatus[] = [
  'created',
  'waiting_for_resource',
  'preparing',
  'pending',
  'running',
  'scheduled',
];

type Entry = CiStatus | 'success_with_warnings' | 'ignored';

export interface StatusOf {
  status: CiStatus;
  allowFailure: boolean;
}

export interface Composite {
  status: CiStatus | null;
  warnings: boolean;
}

/**
 * The status of a stage or pipeline from its jobs', or (for a job) of the jobs before it or those it
 * needs (`dag`). A failure or cancellation allowed to fail counts as a success with warnings; a manual
 * job allowed to fail is ignored. null when there is nothing.
 */
export function composite(jobs: readonly StatusOf[], dag = false): Composite {
  const set = new Set<Entry>();
  for (const job of jobs) {
    if (job.allowFailure && (job.status === 'failed' || job.status === 'canceled'))
      set.add('success_with_warnings');
    else if (job.allowFailure && job.status === 'manual') set.add('ignored');
    else set.add(job.status);
  }
  const warnings = set.has('success_with_warnings');
  if (set.size === 0) return { status: null, warnings };
  const any = (...names: Entry[]) => names.some((name) => set.has(name));
  const only = (...names: Entry[]) => {
    const matching = names.filter((name) => set.has(name)).length;
    return matching > 0 && matching === set.size;
  };
  const status = ((): CiStatus => {
    if (dag && any('skipped', 'ignored')) return 'skipped';
    if (dag && !only('success', 'failed', 'canceled', 'skipped', 'success_with_warnings')) return 'pending';
    if (only('skipped', 'ignored')) return 'skipped';
    if (only('success', 'skipped', 'success_with_warnings', 'ignored')) return 'success';
    if (only('created', 'success_with_warnings', 'ignored')) return 'created';
    if (only('preparing', 'success_with_warnings', 'ignored')) return 'preparing';
    if (only('canceled', 'success', 'skipped', 'success_with_warnings', 'ignored')) return 'canceled';
    if (only('pending', 'created', 'skipped', 'success_with_warnings', 'ignored')) return 'pending';
    if (any('running', 'pending')) return 'running';
    if (any('waiting_for_resource')) return 'waiting_for_resource';
    if (any('manual')) return 'manual';
    if (any('scheduled')) return 'scheduled';
    if (any('preparing')) return 'preparing';
    if (any('created')) return 'running';
    return 'failed';
  })();
  return { status, warnings };
}

interface Shown {
  icon: string;
  text: string;
  label: string;
  group: string;
  favicon: string;
}

const CORE: Record<CiStatus, Shown> = {
  created: {
    icon: 'status_created',
    text: 'Created',
    label: 'created',
    group: 'created',
    favicon: 'favicon_status_created',
  },
  waiting_for_resource: {
    icon: 'status_pending',
    text: 'Waiting',
    label: 'waiting for resource',
    group: 'waiting-for-resource',
    favicon: 'favicon_pending',
  },
  preparing: {
    icon: 'status_preparing',
    text: 'Preparing',
    label: 'preparing',
    group: 'preparing',
    favicon: 'favicon_status_preparing',
  },
  pending: {
    icon: 'status_pending',
    text: 'Pending',
    label: 'pending',
    group: 'pending',
    favicon: 'favicon_status_pending',
  },
  running: {
    icon: 'status_running',
    text: 'Running',
    label: 'running',
    group: 'running',
    favicon: 'favicon_status_running',
  },
  success: {
    icon: 'status_success',
    text: 'Passed',
    label: 'passed',
    group: 'success',
    favicon: 'favicon_status_success',
  },
  failed: {
    icon: 'status_failed',
    text: 'Failed',
    label: 'failed',
    group: 'failed',
    favicon: 'favicon_status_failed',
  },
  canceled: {
    icon: 'status_canceled',
    text: 'Canceled',
    label: 'canceled',
    group: 'canceled',
    favicon: 'favicon_status_canceled',
  },
  skipped: {
    icon: 'status_skipped',
    text: 'Skipped',
    label: 'skipped',
    group: 'skipped',
    favicon: 'favicon_status_skipped',
  },
  manual: {
    icon: 'status_manual',
    text: 'Manual',
    label: 'manual action',
    group: 'manual',
    favicon: 'favicon_status_manual',
  },
  scheduled: {
    icon: 'status_scheduled',
    text: 'Scheduled',
    label: 'scheduled',
    group: 'scheduled',
    favicon: 'favicon_status_scheduled',
  },
};

/** A pipeline's (or stage's) status as GitLab shows it, with the pipeline's own wordings. */
export function shownPipelineStatus(status: CiStatus, warnings: boolean): Shown {
  if (status === 'success' && warnings)
    return {
      icon: 'status_warning',
      text: 'Warning',
      label: 'passed with warnings',
      group: 'success_with_warnings',
      favicon: 'favicon_status_success',
    };
  if (status === 'manual') return { ...CORE.manual, text: 'Blocked', label: 'waiting for manual action' };
  if (status === 'scheduled') return { ...CORE.scheduled, text: 'Delayed', label: 'waiting for delayed job' };
  return CORE[status];
}

/** A job's status as GitLab shows it (a failure allowed to fail is "failed (allowed to fail)"). */
export function shownJobStatus(status: CiStatus, allowFailure: boolean): Shown {
  if (status === 'failed' && allowFailure)
    return {
      ...CORE.failed,
      icon: 'status_warning',
      label: 'failed (allowed to fail)',
      group: 'failed-with-warnings',
    };
  if (status === 'scheduled') return { ...CORE.scheduled, label: 'delayed manual action' };
  return CORE[status];
}

export const faviconPath = (favicon: string) => `/assets/ci_favicons/${favicon}.png`;
