import { LruCache, WeightedLruCache } from '../core/lru.js';
import type { ChangeFeed } from './changes.js';

/**
 * A change the triggers announce: a user (or one of their tokens), a namespace (its row, or a project
 * entering or leaving it), a project (its row or its shares), the merge requests of a project, what a
 * project's merge request lists show beside those rows, the pipelines or jobs of a project, or (`id` 0) access to projects or the titles
 * of labels.
 */
export interface Change {
  kind:
    | 'user'
    | 'namespace'
    | 'project'
    | 'merge_requests'
    | 'merge_request_records'
    | 'pipelines'
    | 'access'
    | 'labels';
  id: number;
}

function parseChange(payload: string): Change | undefined {
  if (payload === 'access' || payload === 'labels') return { kind: payload, id: 0 };
  const match = /^(user|namespace|project|merge_requests|merge_request_records|pipelines):(\d+)$/.exec(
    payload,
  );
  return match ? { kind: match[1] as Change['kind'], id: Number(match[2]) } : undefined;
}

type Entry<V> = { value: V; storedAt: number };

/**
 * Facts read on every request (accounts, projects), kept in memory between the database's announcements
 * of their change (src/db/changes.ts). An entry goes when a change `affects` it; everything goes on a payload
 * it cannot read or when changes may have been lost; nothing is served or stored while the feed is not
 * live; and no entry outlives `ttlMs`, a bound should an announcement ever be missed.
 *
 * A read that began before a change must not store what it read: `mark()` before reading, `set` with
 * the mark, and the value is dropped if any change was heard in between. Changes of other `kinds` than
 * the cache's pass it by.
 */
export class ChangeCache<K, V> {
  private readonly entries: LruCache<K, Entry<V>> | WeightedLruCache<K, Entry<V>>;
  private generation = 0;

  constructor(
    private readonly feed: ChangeFeed,
    capacity: number,
    private readonly ttlMs: number,
    private readonly kinds: ReadonlyArray<Change['kind']>,
    private readonly affects: (key: K, value: V, change: Change) => boolean,
    /** With it, `capacity` bounds the entries' summed weight rather than their number. */
    weigh?: (value: V) => number,
  ) {
    this.entries = weigh
      ? new WeightedLruCache<K, Entry<V>>(capacity, (entry) => weigh(entry.value))
      : new LruCache<K, Entry<V>>(capacity);
    feed.subscribe((payload) => this.changed(payload));
  }

  get(key: K): V | undefined {
    if (!this.feed.live) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (Date.now() - entry.storedAt >= this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  mark(): number {
    return this.generation;
  }

  set(key: K, value: V, mark: number): void {
    if (!this.feed.live || mark !== this.generation) return;
    this.entries.set(key, { value, storedAt: Date.now() });
  }

  private changed(payload: string | undefined): void {
    const change = payload === undefined ? undefined : parseChange(payload);
    if (change && !this.kinds.includes(change.kind)) return;
    this.generation++;
    if (!change) {
      this.entries.clear();
      return;
    }
    for (const [key, entry] of this.entries)
      if (this.affects(key, entry.value, change)) this.entries.delete(key);
  }
}

/** A request's own copy of a cached entity (same class, same fields): what it changes stays its own. */
export const ownCopy = <T extends object>(entity: T): T =>
  Object.assign(Object.create(Object.getPrototypeOf(entity) as object) as T, entity);
