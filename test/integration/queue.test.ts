/**
 * The event seam over the durable queue, on this run's database (PostgreSQL or PGlite): jobs exist only
 * when their transaction commits, failed attempts are retried with growing delays, and two queues over
 * one database run each job once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { defineSubscriber, Events, type AnySubscriber } from '../../src/core/events.js';
import { Queue } from '../../src/core/queue.js';
import { createDataSource } from '../../src/db/data-source.js';
import { databaseModel } from '../../src/families.js';
import { openTestDatabase } from '../helpers/database.js';

declare module '../../src/core/events.js' {
  interface EventCatalog {
    'queue_test.ping': { n: number; tag: string };
  }
}

const settings = { expireInSeconds: 10, pollingIntervalSeconds: 0.5 };
let dataSource: DataSource;
let drop: () => Promise<void>;
const started: Events[] = [];
const extraSources: DataSource[] = [];

beforeAll(async () => {
  ({ dataSource, drop } = await openTestDatabase());
});

afterAll(async () => {
  for (const events of started) await events.stop();
  for (const source of extraSources) await source.destroy();
  await drop();
});

async function startEvents(source: DataSource, subscribers: AnySubscriber[]): Promise<Events> {
  const events = new Events(await Queue.create(source, settings));
  events.subscribe(subscribers);
  await events.start();
  started.push(events);
  return events;
}

/** Another connection pool on the same database and schema, as a second server process has. */
async function secondDataSource(): Promise<DataSource> {
  // The test file's own database, as the first DataSource reaches it.
  const { url, schema } = dataSource.options as { url?: string; schema?: string };
  // PGlite has one session in one process: a second queue shares the DataSource.
  if (!process.env.FORGE_TEST_DATABASE_URL || !url) return dataSource;
  const source = await createDataSource({ url, schema }, databaseModel);
  extraSources.push(source);
  return source;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const publish = (events: Events, tag: string, n: number) =>
  dataSource.transaction((tx) => events.publish(tx, 'queue_test.ping', { n, tag }));

describe('the event seam', () => {
  it('never runs a job whose transaction rolled back, and runs the committed one', async () => {
    const seen: number[] = [];
    const events = await startEvents(dataSource, [
      defineSubscriber({
        event: 'queue_test.ping',
        name: 'queue_test_rollback',
        async handle(payload) {
          if (payload.tag === 'rollback') seen.push(payload.n);
        },
      }),
    ]);
    await expect(
      dataSource.transaction(async (tx) => {
        await events.publish(tx, 'queue_test.ping', { n: 1, tag: 'rollback' });
        throw new Error('the change fails');
      }),
    ).rejects.toThrow('the change fails');
    await publish(events, 'rollback', 2);
    await until(() => seen.includes(2));
    // Several more polls: the rolled-back job never shows up.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(seen).toEqual([2]);
    const counts = await events.queue.counts();
    expect(counts.find((q) => q.name === 'queue_test_rollback')).toMatchObject({ completed: 1, backlog: 0 });
  });

  it('starts a committed job at once, not at the next poll', async () => {
    const handled: number[] = [];
    const events = new Events(await Queue.create(dataSource, { ...settings, pollingIntervalSeconds: 60 }));
    events.subscribe([
      defineSubscriber({
        event: 'queue_test.ping',
        name: 'queue_test_wake',
        async handle(payload) {
          if (payload.tag === 'wake') handled.push(Date.now());
        },
      }),
    ]);
    await events.start();
    started.push(events);
    // The worker's first poll comes right after it starts; the next one would be a minute later.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const committed = Date.now();
    await publish(events, 'wake', 1);
    await until(() => handled.length === 1, 10_000);
    expect(handled[0] - committed).toBeLessThan(5000);
  });

  it('refuses to publish outside a transaction', async () => {
    const events = await startEvents(dataSource, [
      defineSubscriber({ event: 'queue_test.ping', name: 'queue_test_unused', handle: async () => {} }),
    ]);
    await expect(events.publish(dataSource.manager, 'queue_test.ping', { n: 0, tag: 'x' })).rejects.toThrow(
      'jobs are enqueued inside a transaction',
    );
  });

  it('retries a failing handler with growing delays, then completes', async () => {
    const attempts: Array<{ at: number; retryCount: number }> = [];
    const events = await startEvents(dataSource, [
      defineSubscriber({
        event: 'queue_test.ping',
        name: 'queue_test_retry',
        retryLimit: 3,
        retryDelaySeconds: 1,
        retryBackoff: true,
        async handle(payload, job) {
          if (payload.tag !== 'retry') return;
          attempts.push({ at: Date.now(), retryCount: job.retryCount });
          if (attempts.length < 3) throw new Error(`attempt ${attempts.length} fails`);
        },
      }),
    ]);
    await publish(events, 'retry', 1);
    await until(async () => {
      const queue = (await events.queue.counts()).find((q) => q.name === 'queue_test_retry');
      return queue?.completed === 1;
    }, 30_000);
    expect(attempts.map((a) => a.retryCount)).toEqual([0, 1, 2]);
    // Backoff: the n-th retry waits between delay * 2^(n-1) and twice that (pg-boss adds jitter).
    const first = attempts[1].at - attempts[0].at;
    const second = attempts[2].at - attempts[1].at;
    expect(first).toBeGreaterThanOrEqual(1000);
    expect(second).toBeGreaterThanOrEqual(2000);
    const [job] = await dataSource.query(
      `SELECT state, retry_count FROM ${events.queue.schema}.job WHERE name = 'queue_test_retry'`,
    );
    expect(job).toMatchObject({ state: 'completed', retry_count: 2 });
  }, 40_000);

  it('marks a job failed once its retries are used up', async () => {
    const events = await startEvents(dataSource, [
      defineSubscriber({
        event: 'queue_test.ping',
        name: 'queue_test_dead',
        retryLimit: 1,
        retryDelaySeconds: 1,
        retryBackoff: false,
        async handle(payload) {
          if (payload.tag === 'dead') throw new Error('always fails');
        },
      }),
    ]);
    await publish(events, 'dead', 1);
    await until(async () => {
      const queue = (await events.queue.counts()).find((q) => q.name === 'queue_test_dead');
      return queue?.failed === 1;
    });
    const [job] = await dataSource.query(
      `SELECT state, retry_count, output FROM ${events.queue.schema}.job WHERE name = 'queue_test_dead'`,
    );
    expect(job).toMatchObject({ state: 'failed', retry_count: 1 });
    expect(job.output).toMatchObject({ message: 'always fails' });
  }, 30_000);

  it('runs each job once when two processes share the queue', async () => {
    const runs: Array<{ n: number; worker: string }> = [];
    const subscriber = (worker: string): AnySubscriber =>
      defineSubscriber({
        event: 'queue_test.ping',
        name: 'queue_test_shared',
        async handle(payload) {
          if (payload.tag !== 'shared') return;
          runs.push({ n: payload.n, worker });
          await new Promise((resolve) => setTimeout(resolve, 20));
        },
      });
    const first = await startEvents(dataSource, [subscriber('first')]);
    await startEvents(await secondDataSource(), [subscriber('second')]);
    const total = 40;
    await dataSource.transaction(async (tx) => {
      for (let n = 0; n < total; n++) await first.publish(tx, 'queue_test.ping', { n, tag: 'shared' });
    });
    await until(() => runs.length >= total, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(runs.map((r) => r.n).sort((a, b) => a - b)).toEqual([...Array(total).keys()]);
    if (process.env.FORGE_TEST_DATABASE_URL) {
      // On PostgreSQL both pools fetch concurrently and both get work.
      expect(new Set(runs.map((r) => r.worker)).size).toBe(2);
    }
  }, 90_000);
});
