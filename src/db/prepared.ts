import crypto from 'node:crypto';
import { QueryFailedError, type DataSource } from 'typeorm';

/** How many distinct statements are prepared at most; beyond, statements run unprepared. */
const MAX_PREPARED = 256;
/** Statement names by text, for the texts prepared so far. */
const prepared = new Map<string, string>();

interface PgClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * A statement of a hot read, as a named prepared statement on PostgreSQL: each connection plans it
 * once instead of at every call, and for the reads with subqueries planning costs more than running.
 * The name comes from the text, so one name never stands for two texts. PGlite runs it unprepared.
 * (Behind PgBouncer, prepared statements need session pooling or PgBouncer 1.21 and later.)
 */
export async function preparedQuery<T = Record<string, unknown>>(
  dataSource: DataSource,
  text: string,
  values: unknown[],
): Promise<T[]> {
  const embedded = (dataSource.options as { driver?: unknown }).driver !== undefined;
  let name = prepared.get(text);
  if (!name) {
    if (embedded || prepared.size >= MAX_PREPARED) return dataSource.query(text, values);
    name = `forge_${crypto.createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    prepared.set(text, name);
  }
  const runner = dataSource.createQueryRunner();
  try {
    const client = (await runner.connect()) as PgClient;
    return (await client.query({ name, text, values })).rows as T[];
  } catch (err) {
    throw new QueryFailedError(text, values, err as Error);
  } finally {
    await runner.release();
  }
}
