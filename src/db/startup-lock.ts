import { DroppingClient } from './pg-client.js';

/** Scoped to the schema, as the instance claim and the storage lock are. */
const KEY = `('x' || substr(md5(coalesce(current_schema(), current_setting('search_path')) || '.forge-start-up'), 1, 16))::bit(64)::bigint`;

/**
 * Runs a start's writes (migrations, the queue's schema and queues, root's user and token) while no
 * other process on the same PostgreSQL database runs its own. Processes started together would
 * otherwise run one migration twice, create root twice, or deadlock creating queues (pg-boss inserts a
 * queue's row, then locks the table of queues to add the new partition's foreign keys, which waits for
 * the other's insert, whose transaction waits for this one).
 *
 * A session-level advisory lock on a connection of its own, outside the pool: no pooled connection
 * keeps it, and a process that dies while it holds it releases it with its connection. The embedded
 * database belongs to one process, and its single session could not be held: no lock there.
 */
export async function oneStartAtATime<T>(
  databaseUrl: string | undefined,
  connectMs: number,
  steps: () => Promise<T>,
): Promise<T> {
  if (!databaseUrl) return steps();
  const client = new DroppingClient({
    connectionString: databaseUrl,
    connectionTimeoutMillis: connectMs,
    keepAlive: true,
  });
  // A connection lost meanwhile fails the steps' own queries; its event alone must not end the process.
  client.on('error', () => undefined);
  await client.connect();
  try {
    // Another start's steps may take longer than any timeout the server or role sets for a statement.
    await client.query('SET statement_timeout = 0; SET lock_timeout = 0');
    await client.query(`SELECT pg_advisory_lock(${KEY})`);
    return await steps();
  } finally {
    // Closing the session releases the lock.
    await client.end().catch(() => undefined);
  }
}
