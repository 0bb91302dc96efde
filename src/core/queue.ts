/**
 * The durable job queue: pg-boss over the application's own DataSource, on PostgreSQL and on the
 * embedded PGlite alike.
 *
 * pg-boss runs every statement through `executeSql`, which here borrows a query runner from the
 * DataSource. On PGlite a query runner is the exclusive lease on its single session, so a poll waits
 * for an open transaction to finish and never runs inside it. Jobs are enqueued through the caller's
 * transaction (`send(manager, ...)`), never through the DataSource, so nothing waits for a lease it holds.
 */
import os from 'node:os';
import PgBoss from 'pg-boss';
import type { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';

export interface QueueSettings {
  /** How long a job may run; a job left active longer (its process died) is retried. */
  expireInSeconds: number;
  /** How often each worker looks for new jobs. */
  pollingIntervalSeconds: number;
}

export const DEFAULT_QUEUE_SETTINGS: QueueSettings = { expireInSeconds: 300, pollingIntervalSeconds: 2 };

/** Retry policy of one queue; the delay doubles with each attempt when `retryBackoff` is set. */
export interface RetryPolicy {
  retryLimit?: number;
  retryDelaySeconds?: number;
  retryBackoff?: boolean;
  /** Overrides the queue-wide expiry for a job that legitimately runs long. */
  expireInSeconds?: number;
}

export interface QueueJob<T> {
  id: string;
  data: T;
  /** 0 on the first run, then 1, 2, ... */
  retryCount: number;
}

/** Counts per queue, read from pg-boss's tables. */
export interface QueueCounts {
  name: string;
  /** Jobs due now and not yet started. */
  backlog: number;
  /** Seconds the oldest due job has waited. */
  latency: number;
  /** Jobs not due yet (a retry's delay). */
  scheduled: number;
  /** Jobs whose latest attempt failed and that will be tried again. */
  retrying: number;
  active: number;
  completed: number;
  /** Jobs that failed their last allowed attempt. */
  failed: number;
}

type Db = PgBoss.Db;

/** pg-boss's `db` adapter over one query runner, as the DataSource leases it for each statement. */
function dataSourceDb(dataSource: DataSource, inflight: Set<Promise<unknown>>): Db {
  return {
    executeSql: (text, values) => {
      const run = (async () => {
        const runner = dataSource.createQueryRunner();
        try {
          const result = await runner.query(text, values, true);
          return { rows: (result.records ?? []) as unknown[] };
        } finally {
          await runner.release();
        }
      })();
      inflight.add(run);
      void run.finally(() => inflight.delete(run)).catch(() => undefined);
      return run;
    },
  };
}

/** pg-boss's `db` adapter over the caller's transaction. */
/** Whether the transaction enqueued jobs of the queue whose mark is `sent`; clears the mark. */
function takeSent(runner: QueryRunner, sent: symbol): boolean {
  const data = runner.data as Record<symbol, boolean | undefined>;
  const marked = data[sent] === true;
  delete data[sent];
  return marked;
}

/** The transaction as pg-boss's database; marks it with `sent`, so that its commit wakes the workers. */
function transactionDb(manager: EntityManager, sent: symbol): Db {
  const runner = manager.queryRunner;
  if (!runner?.isTransactionActive) throw new Error('jobs are enqueued inside a transaction');
  (runner.data as Record<symbol, boolean>)[sent] = true;
  return {
    executeSql: async (text, values) => {
      const result = await runner.query(text, values, true);
      return { rows: (result.records ?? []) as unknown[] };
    },
  };
}

/**
 * The schema that holds the queue: `pgboss` beside an application in `public`, else
 * `<application schema>_pgboss`, so that databases or schemas that hold separate instances (tests
 * give each file its own) never share jobs.
 */
export async function queueSchema(dataSource: DataSource): Promise<string> {
  const configured = (dataSource.options as { schema?: string }).schema;
  const schema =
    configured ??
    ((await dataSource.query('SELECT current_schema() AS schema')) as [{ schema: string }])[0].schema;
  return queueSchemaFor(schema);
}

export const queueSchemaFor = (appSchema: string) =>
  appSchema === 'public' ? 'pgboss' : `${appSchema}_pgboss`;

function bossOptions(schema: string, db: Db, settings: QueueSettings): PgBoss.ConstructorOptions {
  return {
    db,
    schema,
    schedule: false,
    supervise: true,
    migrate: true,
    expireInSeconds: settings.expireInSeconds,
    // Expiry is only noticed by maintenance, so it runs often enough for a short expiry to matter.
    maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.floor(settings.expireInSeconds / 2))),
    pollingIntervalSeconds: settings.pollingIntervalSeconds,
  };
}

/** Creates or upgrades the queue's tables; run with the migrations, so a migrated database has them. */
export async function installQueue(dataSource: DataSource): Promise<void> {
  const boss = new PgBoss({
    db: dataSourceDb(dataSource, new Set()),
    schema: await queueSchema(dataSource),
    schedule: false,
    supervise: false,
  });
  boss.on('error', () => undefined);
  // start() installs or migrates; nothing else runs before stop().
  await boss.start();
  await boss.stop({ graceful: false, close: false });
}

export class Queue {
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly running = new Set<Promise<unknown>>();
  private readonly boss: PgBoss;
  private readonly workers: string[] = [];
  private readonly startedAt = new Date();
  private started = false;
  /** Marks the transactions that enqueued jobs of this queue. */
  private readonly sent = Symbol('jobs sent');

  private constructor(
    private readonly dataSource: DataSource,
    readonly schema: string,
    readonly settings: QueueSettings,
    onError: (err: Error) => void,
  ) {
    this.boss = new PgBoss(bossOptions(schema, dataSourceDb(dataSource, this.inflight), settings));
    this.boss.on('error', onError);
    // Jobs enqueued in a transaction start when it commits, as Sidekiq picks jobs up at once, rather than
    // at the next poll; a rollback leaves nothing to start.
    const wake = (runner: QueryRunner) => {
      if (takeSent(runner, this.sent)) this.notify();
    };
    const forget = (runner: QueryRunner) => takeSent(runner, this.sent);
    dataSource.subscribers.push({
      afterTransactionCommit: (event) => wake(event.queryRunner),
      afterTransactionRollback: (event) => {
        forget(event.queryRunner);
      },
    } satisfies EntitySubscriberInterface);
  }

  static async create(
    dataSource: DataSource,
    settings: QueueSettings = DEFAULT_QUEUE_SETTINGS,
    onError: (err: Error) => void = () => undefined,
  ): Promise<Queue> {
    return new Queue(dataSource, await queueSchema(dataSource), settings, onError);
  }

  /** Installs or upgrades the tables when needed and starts maintenance (expiry of abandoned jobs). */
  async start(): Promise<void> {
    if (this.started) return;
    await this.boss.start();
    this.started = true;
  }

  /**
   * Declares a queue (idempotent) with its retry policy. Two processes creating queues at once can
   * deadlock in pg-boss, so servers declare theirs at start, under the start-up lock (db/startup-lock.ts).
   */
  async declare(name: string, policy: RetryPolicy = {}): Promise<void> {
    const options: PgBoss.Queue = { name };
    if (policy.retryLimit !== undefined) options.retryLimit = policy.retryLimit;
    if (policy.retryDelaySeconds !== undefined) options.retryDelay = policy.retryDelaySeconds;
    if (policy.retryBackoff !== undefined) options.retryBackoff = policy.retryBackoff;
    if (policy.expireInSeconds !== undefined) options.expireInSeconds = policy.expireInSeconds;
    await this.boss.createQueue(name, options);
    // createQueue keeps an existing queue's policy; a changed policy is applied to later jobs.
    await this.boss.updateQueue(name, options);
  }

  /** Runs `handle` for each job of the queue, one at a time; a throw is a failed attempt. */
  async work<T>(name: string, handle: (job: QueueJob<T>) => Promise<void>): Promise<void> {
    let id = '';
    id = await this.boss.work<T>(name, { includeMetadata: true, batchSize: 1 }, async ([job]) => {
      const run = handle({ id: job.id, data: job.data, retryCount: job.retryCount });
      this.running.add(run);
      try {
        await run;
      } finally {
        this.running.delete(run);
        // The next job, if any, is fetched at once rather than after a polling interval.
        if (this.started) this.boss.notifyWorker(id);
      }
    });
    this.workers.push(id);
  }

  /** Enqueues a job in the caller's transaction: it exists only if that transaction commits. */
  async send(manager: EntityManager, name: string, data: object, startAfter?: Date): Promise<void> {
    const id = await this.boss.send(name, data, {
      db: transactionDb(manager, this.sent),
      ...(startAfter ? { startAfter } : {}),
    });
    if (!id) throw new Error(`queue "${name}" is not declared`);
  }

  /** Wakes this process's workers; jobs committed meanwhile start without waiting for the next poll. */
  notify(): void {
    for (const id of this.workers) this.boss.notifyWorker(id);
  }

  /**
   * Stops fetching, lets running jobs finish for up to `timeoutMs` (those still running fail, to be
   * retried), and waits for pg-boss's last statements, so the DataSource can be closed after.
   */
  async stop(timeoutMs = 8000): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.boss.stop({ graceful: true, wait: true, close: false, timeout: timeoutMs });
    // A poll in flight when stop() began may still hand a job to its handler.
    while (this.inflight.size > 0 || this.running.size > 0) {
      await Promise.allSettled([...this.inflight, ...this.running]);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** What this process works on, for the process metrics. */
  processInfo(): { hostname: string; pid: number; startedAt: Date; busy: number } {
    return { hostname: os.hostname(), pid: process.pid, startedAt: this.startedAt, busy: this.running.size };
  }

  /** Per-queue counts over the live and the archived jobs. */
  async counts(): Promise<QueueCounts[]> {
    const s = this.schema;
    const rows: Array<Record<string, string | number | null>> = await this.dataSource.query(
      `SELECT q.name,
          count(*) FILTER (WHERE j.state IN ('created', 'retry') AND j.start_after <= now()) AS backlog,
          COALESCE(EXTRACT(EPOCH FROM now() - min(j.start_after)
            FILTER (WHERE j.state IN ('created', 'retry') AND j.start_after <= now())), 0) AS latency,
          count(*) FILTER (WHERE j.state IN ('created', 'retry') AND j.start_after > now()) AS scheduled,
          count(*) FILTER (WHERE j.state = 'retry') AS retrying,
          count(*) FILTER (WHERE j.state = 'active') AS active,
          count(*) FILTER (WHERE j.state = 'completed') AS completed,
          count(*) FILTER (WHERE j.state = 'failed') AS failed
        FROM ${s}.queue q
        LEFT JOIN (
          SELECT name, state, start_after FROM ${s}.job
          UNION ALL SELECT name, state, start_after FROM ${s}.archive
        ) j ON j.name = q.name
        GROUP BY q.name ORDER BY q.name`,
    );
    return rows.map((row) => ({
      name: String(row.name),
      backlog: Number(row.backlog),
      latency: Math.round(Number(row.latency) * 1000) / 1000,
      scheduled: Number(row.scheduled),
      retrying: Number(row.retrying),
      active: Number(row.active),
      completed: Number(row.completed),
      failed: Number(row.failed),
    }));
  }
}
