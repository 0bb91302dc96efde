/**
 * An offset page and its total in one prepared statement, for the hot lists of a single entity: the page
 * as JSON rows hydrated like TypeORM's, and the count up to GitLab's limit (beyond it the totals are left
 * out, as GitLab does). One round trip, planned once per connection, instead of TypeORM's page and count.
 * With `counts`, a total is kept until the database announces a change it depends on (change-cache.ts),
 * and the statement then reads the page alone.
 */
import type { DataSource, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import {
  boundedOffsetHeaders,
  MAX_COUNTED_ITEMS,
  pageWindow,
  type Page,
  type PageParams,
  type RequestInfo,
} from '../core/pagination.js';
import { preparedQuery } from './prepared.js';
import type { ChangeCache } from './change-cache.js';
import type { EntityRows } from './rows.js';

interface PageRow {
  counted: number;
  items: Array<Record<string, unknown>> | null;
}

/** `query` is filtered and ordered, selects its alias's columns and has no join. */
export async function paginateOffsetInOneStatement<T extends ObjectLiteral>(
  dataSource: DataSource,
  query: SelectQueryBuilder<T>,
  rows: EntityRows<T>,
  params: PageParams,
  request: RequestInfo,
  counts?: { cache: ChangeCache<string, number>; key: string },
): Promise<Page<T>> {
  const { page, perPage, offset } = pageWindow(params);
  const known = counts?.cache.get(counts.key);
  const mark = counts?.cache.mark();
  const counting = query
    .clone()
    .orderBy()
    .select('1', 'one')
    .limit(MAX_COUNTED_ITEMS + 1);
  const alias = query.alias;
  const paging = query.clone().select(`"${alias}".*`);
  const count = known === undefined ? `(SELECT count(*)::int FROM (${counting.getQuery()}) c)` : 'NULL::int';
  const statement = `SELECT ${count} AS counted,
    (SELECT json_agg(x) FROM (${paging.getQuery()} LIMIT :pageLimit OFFSET :pageOffset) x) AS items`;
  const [sql, values] = dataSource.driver.escapeQueryWithParameters(statement, {
    ...query.getParameters(),
    pageLimit: perPage + 1,
    pageOffset: offset,
  });
  const [row] = await preparedQuery<PageRow>(dataSource, sql, values);
  const found = (row.items ?? []).map((json) => rows.fromJson(json));
  const counted = known ?? row.counted;
  if (counts && known === undefined) counts.cache.set(counts.key, counted, mark!);
  const total = counted > MAX_COUNTED_ITEMS ? null : counted;
  return {
    items: found.slice(0, perPage),
    headers: boundedOffsetHeaders(total, found.length > perPage, page, perPage, request),
  };
}
