/**
 * The event seam: work that follows a change runs as durable jobs, one per subscriber, enqueued in the
 * transaction that made the change. A change that rolls back leaves no job; a process that dies
 * mid-job leaves it to be retried.
 */
import type { EntityManager } from 'typeorm';
import type { Queue, QueueJob, RetryPolicy } from './queue.js';

/**
 * Every event by name, with its payload. Empty here: each family declares its own events by
 * declaration merging, so that core imports no family:
 *
 *     declare module '../core/events.js' {
 *       interface EventCatalog { 'project.deleted': ProjectDeleted }
 *     }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface EventCatalog {}

export type EventName = keyof EventCatalog;

/** Defaults for a subscriber's retries: five more attempts, from 10 s apart, doubling. */
export const DEFAULT_RETRY: Required<Omit<RetryPolicy, 'expireInSeconds'>> = {
  retryLimit: 5,
  retryDelaySeconds: 10,
  retryBackoff: true,
};

/** Work one family does after an event. `name` is its queue's name, unique on the instance. */
export interface Subscriber<E extends EventName = EventName> extends RetryPolicy {
  event: E;
  name: string;
  /** Runs once per event (again after a failure or a crash): it must be safe to repeat. */
  handle(payload: EventCatalog[E], job: QueueJob<EventCatalog[E]>): Promise<void>;
}

/** A subscriber of any event, as lists hold them. */
export type AnySubscriber = { [E in EventName]: Subscriber<E> }[EventName];

/** What a family manifest's `subscribers` field holds: its subscribers, built from its services. */
export type SubscribersFactory<S> = (services: S) => readonly AnySubscriber[];

export const defineSubscriber = <E extends EventName>(subscriber: Subscriber<E>): Subscriber<E> => subscriber;

export class Events {
  private readonly byEvent = new Map<string, AnySubscriber[]>();
  private readonly names = new Set<string>();
  private started = false;

  constructor(readonly queue: Queue) {}

  /** Adds subscribers; they must all be known before `start`. */
  subscribe(subscribers: readonly AnySubscriber[]): void {
    if (this.started) throw new Error('subscribers are added before the events start');
    for (const subscriber of subscribers) {
      if (this.names.has(subscriber.name)) throw new Error(`two subscribers are named "${subscriber.name}"`);
      this.names.add(subscriber.name);
      const list = this.byEvent.get(subscriber.event) ?? [];
      list.push(subscriber);
      this.byEvent.set(subscriber.event, list);
    }
  }

  /** Declares each subscriber's queue and starts working on it. */
  async start(): Promise<void> {
    await this.queue.start();
    for (const list of this.byEvent.values()) {
      for (const subscriber of list) {
        await this.queue.declare(subscriber.name, { ...DEFAULT_RETRY, ...retryPolicy(subscriber) });
        await this.queue.work<never>(subscriber.name, (job) =>
          (subscriber.handle as (payload: unknown, job: QueueJob<unknown>) => Promise<void>)(job.data, job),
        );
      }
    }
    this.started = true;
  }

  /**
   * Enqueues one job per subscriber of `event` in `manager`'s transaction (it must be one), to run at
   * once or from `startAfter`. Publishing before `start` fails, since a queue that was never declared
   * would silently drop the job.
   */
  async publish<E extends EventName>(
    manager: EntityManager,
    event: E,
    payload: EventCatalog[E],
    options: { startAfter?: Date } = {},
  ): Promise<void> {
    const subscribers = this.byEvent.get(event) ?? [];
    if (subscribers.length > 0 && !this.started) throw new Error('events are published after they start');
    for (const subscriber of subscribers)
      await this.queue.send(manager, subscriber.name, payload as object, options.startAfter);
  }

  /** Queue names, in the order subscribers were added. */
  queueNames(): string[] {
    return [...this.names];
  }

  async stop(timeoutMs?: number): Promise<void> {
    await this.queue.stop(timeoutMs);
  }
}

function retryPolicy(subscriber: RetryPolicy): RetryPolicy {
  const { retryLimit, retryDelaySeconds, retryBackoff, expireInSeconds } = subscriber;
  return Object.fromEntries(
    Object.entries({ retryLimit, retryDelaySeconds, retryBackoff, expireInSeconds }).filter(
      ([, value]) => value !== undefined,
    ),
  );
}
