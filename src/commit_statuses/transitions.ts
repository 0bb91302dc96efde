/**
 * GitLab's state machine of commit statuses (CommitStatus), as the statuses API drives it: each posted
 * state is an event, allowed from some statuses only. Pure, so that its table is tested as a table.
 */
import type { CiStatus } from '../pipelines/pipeline.entity.js';

export type PostedState = 'pending' | 'running' | 'success' | 'failed' | 'canceled' | 'skipped';

type Event = 'enqueue' | 'run' | 'success' | 'drop' | 'cancel' | 'skip';

/** Each event: the statuses it leaves from, and the status it reaches. */
const EVENTS: Record<Event, { from: readonly CiStatus[]; to: CiStatus }> = {
  enqueue: { from: ['created', 'skipped', 'manual', 'scheduled'], to: 'pending' },
  run: { from: ['pending'], to: 'running' },
  success: { from: ['created', 'waiting_for_resource', 'preparing', 'pending', 'running'], to: 'success' },
  drop: {
    from: ['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'scheduled'],
    to: 'failed',
  },
  cancel: {
    from: ['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'manual', 'scheduled'],
    to: 'canceled',
  },
  skip: { from: ['created', 'waiting_for_resource', 'preparing', 'pending'], to: 'skipped' },
};

/**
 * The events a posted state fires, in order; `strict` false for the one whose refusal GitLab ignores
 * (`running` first tries to enqueue, which a pending status need not).
 */
const STEPS: Record<PostedState, Array<{ event: Event; strict: boolean }>> = {
  pending: [{ event: 'enqueue', strict: true }],
  running: [
    { event: 'enqueue', strict: false },
    { event: 'run', strict: true },
  ],
  success: [{ event: 'success', strict: true }],
  failed: [{ event: 'drop', strict: true }],
  canceled: [{ event: 'cancel', strict: true }],
  skipped: [{ event: 'skip', strict: true }],
};

export type TransitionResult = { ok: true; status: CiStatus } | { ok: false; message: string };

/** Where posting `state` takes a status that is `from` (a new status is `created`), or GitLab's refusal. */
export function transition(from: CiStatus, state: PostedState): TransitionResult {
  let status = from;
  for (const { event, strict } of STEPS[state]) {
    const rule = EVENTS[event];
    if (rule.from.includes(status)) status = rule.to;
    else if (strict)
      return {
        ok: false,
        message: `Cannot transition status via :${event} from :${status} (Reason(s): Status cannot transition via "${event}")`,
      };
  }
  return { ok: true, status };
}

export const FINISHED: readonly CiStatus[] = ['success', 'failed', 'canceled', 'skipped'];
