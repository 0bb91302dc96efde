/**
 * One advisory lock orders whoever places repositories at their hashed paths and whoever removes those
 * no project owns: a creation holds it shared from its first file until its transaction ends, a sweep
 * holds it exclusively while it decides, from committed rows only, which directories are orphans. So a
 * sweep never takes a repository whose row is about to commit. The key is scoped to the schema, as the
 * job queue's is, so instances that share a database server never wait for each other.
 */
import type { EntityManager } from 'typeorm';

const KEY = `('x' || substr(md5(current_schema() || '.forge-repository-storage'), 1, 16))::bit(64)::bigint`;

function inTransaction(manager: EntityManager): void {
  // A transaction-scoped lock outside a transaction would end with its own statement.
  if (!manager.queryRunner?.isTransactionActive)
    throw new Error('the storage lock is taken in a transaction');
}

/** Until the transaction ends: repositories may be placed, no sweep runs. */
export async function holdStorageShared(manager: EntityManager): Promise<void> {
  inTransaction(manager);
  await manager.query(`SELECT pg_advisory_xact_lock_shared(${KEY})`);
}

/** Until the transaction ends: no repository is being placed, and none will be. */
export async function holdStorageExclusive(manager: EntityManager): Promise<void> {
  inTransaction(manager);
  await manager.query(`SELECT pg_advisory_xact_lock(${KEY})`);
}
