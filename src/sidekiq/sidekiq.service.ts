import { isAdmin } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import type { Events } from '../core/events.js';
import { forbidden, unauthorized } from '../core/errors.js';
import type { QueueCounts } from '../core/queue.js';

export interface QueueProcess {
  hostname: string;
  pid: number;
  startedAt: Date;
  queues: string[];
  busy: number;
}

export interface JobTotals {
  processed: number;
  failed: number;
  enqueued: number;
  dead: number;
}

/** What the job queue holds, read from its tables, for administrators. */
export class SidekiqService {
  constructor(private readonly events: Events) {}

  private authorize(caller: Caller): void {
    if (!caller.user) throw unauthorized();
    if (!isAdmin(caller)) throw forbidden();
  }

  async queues(caller: Caller): Promise<QueueCounts[]> {
    this.authorize(caller);
    return this.events.queue.counts();
  }

  processes(caller: Caller): QueueProcess[] {
    this.authorize(caller);
    return [{ ...this.events.queue.processInfo(), queues: this.events.queueNames() }];
  }

  async jobs(caller: Caller): Promise<JobTotals> {
    return totals(await this.queues(caller));
  }
}

export function totals(queues: QueueCounts[]): JobTotals {
  const sum = (pick: (q: QueueCounts) => number) => queues.reduce((n, q) => n + pick(q), 0);
  return {
    processed: sum((q) => q.completed),
    // Jobs waiting for a retry failed their latest attempt, as did dead ones.
    failed: sum((q) => q.retrying + q.failed),
    enqueued: sum((q) => q.backlog + q.scheduled),
    dead: sum((q) => q.failed),
  };
}
