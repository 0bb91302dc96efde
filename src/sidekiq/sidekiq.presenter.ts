import type { components } from '../../generated/openapi.js';
import type { QueueCounts } from '../core/queue.js';
import type { JobTotals, QueueProcess } from './sidekiq.service.js';

type Schemas = components['schemas'];

export function presentQueues(queues: QueueCounts[]): Schemas['SidekiqQueues'] {
  return Object.fromEntries(queues.map((q) => [q.name, { backlog: q.backlog, latency: q.latency }]));
}

export function presentProcesses(processes: QueueProcess[]): Schemas['SidekiqProcess'][] {
  return processes.map((p) => ({
    hostname: p.hostname,
    pid: p.pid,
    tag: 'forge-api',
    started_at: p.startedAt.toISOString(),
    queues: p.queues,
    labels: [],
    concurrency: 1,
    busy: p.busy,
  }));
}

export const presentJobs = (jobs: JobTotals): Schemas['SidekiqJobCounts'] => ({ ...jobs });
