import type { DataSource } from 'typeorm';

/** Scoped to the schema, as the job queue's lock is: servers of other instances on the same database do not count. */
const KEY = `('x' || substr(md5(current_schema() || '.forge-server-instance'), 1, 16))::bit(64)::bigint`;

export interface InstanceClaim {
  /** No other server process was running on this database when this one started. */
  alone: boolean;
  release(): Promise<void>;
}

/**
 * Tells whether this server is the only one on its database, and tells the servers started later that
 * it is not: a shared advisory lock held for the process's life on a connection of its own. Recovery
 * uses it to know that what git left in the repositories belongs to no live process. The embedded
 * database is opened by one process only, and its single session cannot be held, so it is always alone.
 * The claim lapses with its connection (a database restart): a later server then believes it is alone.
 */
export async function claimInstance(dataSource: DataSource, embedded: boolean): Promise<InstanceClaim> {
  if (embedded) return { alone: true, release: async () => undefined };
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  const [{ alone }] = (await runner.query(`SELECT pg_try_advisory_lock(${KEY}) AS alone`)) as [
    { alone: boolean },
  ];
  await runner.query(`SELECT pg_advisory_lock_shared(${KEY})`);
  if (alone) await runner.query(`SELECT pg_advisory_unlock(${KEY})`);
  return {
    alone,
    // A session lock outlives a query runner: the connection goes back to the pool without it.
    release: async () => {
      await runner.query(`SELECT pg_advisory_unlock_shared(${KEY})`);
      await runner.release();
    },
  };
}
