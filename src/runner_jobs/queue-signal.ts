/**
 * Wakes long-polling `POST /jobs/request` calls when a build becomes pending. The migration's trigger
 * announces `ci_build_pending:<id>` on the change feed's channel, in the transaction that made the build
 * pending, so every server process hears it once it commits. While the feed is not live (its listener
 * is down, or a data source without one) waiters fall back to a short poll.
 */
import type { DataSource } from 'typeorm';
import { changeFeed, type ChangeFeed } from '../db/changes.js';

const PREFIX = 'ci_build_pending:';

export class QueueSignal {
  private readonly waiters = new Set<() => void>();
  private readonly feed: ChangeFeed;
  private subscribed = false;
  /** Bumped on every wake-up: a runner's `last_update` that is older has something new to look at. */
  private version = Date.now();
  /** How long a waiter sleeps when the feed is not live. */
  pollMs = 1000;

  constructor(dataSource: DataSource) {
    this.feed = changeFeed(dataSource);
  }

  get lastUpdate(): string {
    return String(this.version);
  }

  /** Call before looking at the queue, then pass it to `wait`: a wake-up in between is not lost. */
  mark(): number {
    this.subscribe();
    return this.version;
  }

  private subscribe(): void {
    if (this.subscribed) return;
    this.subscribed = true;
    this.feed.subscribe((payload) => {
      // undefined: changes may have been missed, so everyone looks again.
      if (payload === undefined || payload.startsWith(PREFIX)) this.wakeAll();
    });
  }

  wakeAll(): void {
    this.version = Math.max(this.version + 1, Date.now());
    const woken = [...this.waiters];
    this.waiters.clear();
    for (const wake of woken) wake();
  }

  /** Resolves when a build may have become pending, or after `ms` (or the poll interval when not live). */
  wait(ms: number, mark: number): Promise<void> {
    if (this.version !== mark) return Promise.resolve();
    const timeout = this.feed.live ? ms : Math.min(ms, this.pollMs);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeout);
      this.waiters.add(done);
    });
  }
}
