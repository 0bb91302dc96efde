import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';

/** What pagination needs of the request to write absolute links back to it. */
export interface RequestInfo {
  /** Path under /api/v4 as received, still URL-encoded. */
  apiPath: string;
  /** The request's query pairs, in order. */
  query: Array<[string, string]>;
  externalUrl: string;
  /** The client's address, for per-IP limits of anonymous callers. */
  ip?: string;
  /** `HEAD` when the GET operation answers a HEAD request. */
  method?: string;
  /** The client's `User-Agent` (kept with what it creates, e.g. snippets' user agent details). */
  userAgent?: string;
  /** The raw request headers, for operations whose protocol puts data in them (`Content-Range`). */
  headers?: Readonly<Record<string, string | string[] | undefined>>;
}

export interface PageParams {
  page?: number;
  per_page?: number;
  pagination?: 'keyset' | 'offset';
}

export interface Page<T> {
  items: T[];
  headers: Record<string, string>;
}

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 100;

export function perPageOf(params: PageParams): number {
  return Math.min(Math.max(params.per_page ?? DEFAULT_PER_PAGE, 1), MAX_PER_PAGE);
}

export const isKeyset = (params: PageParams) => params.pagination === 'keyset';

/**
 * The page, its size and how many rows come before it. The contract bounds `page` by PostgreSQL's
 * `integer`, so the offset reaches (2^31 - 2) * 100: an exact JavaScript number, but past `integer`
 * from page 21,474,837 of 100 on, so SQL takes it as a bigint (an inline literal, or a `::bigint`
 * parameter).
 */
export function pageWindow(params: PageParams): { page: number; perPage: number; offset: number } {
  const perPage = perPageOf(params);
  const page = Math.max(params.page ?? 1, 1);
  return { page, perPage, offset: (page - 1) * perPage };
}

/** The request's own URL with some query parameters replaced (undefined removes one). */
/** Credentials a client may put in the query string: never echoed into a URL we answer with. */
const SECRET_PARAMS = new Set(['private_token', 'job_token']);

export function requestUrl(request: RequestInfo, overrides: Record<string, string | undefined>): string {
  const query = new URLSearchParams(
    request.query.filter(([key]) => !(key in overrides) && !SECRET_PARAMS.has(key)),
  );
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) query.set(key, value);
  const qs = query.toString();
  return `${request.externalUrl}/api/v4${request.apiPath}${qs ? `?${qs}` : ''}`;
}

const link = (url: string, rel: string) => `<${url}>; rel="${rel}"`;

/** Offset pagination in SQL (LIMIT/OFFSET plus one COUNT), with every GitLab header. */
export async function paginateOffset<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  params: PageParams,
  request: RequestInfo,
): Promise<Page<T>> {
  const { page, perPage, offset } = pageWindow(params);
  const [items, total] = await query.skip(offset).take(perPage).getManyAndCount();
  return { items, headers: offsetHeaders(total, page, perPage, request) };
}

export function offsetHeaders(total: number, page: number, perPage: number, request: RequestInfo) {
  const totalPages = Math.max(Math.ceil(total / perPage), 1);
  const next = page < totalPages ? page + 1 : undefined;
  const prev = page > 1 ? Math.min(page - 1, totalPages) : undefined;
  const at = (p: number) => requestUrl(request, { page: String(p), per_page: String(perPage) });
  const links = [
    ...(prev ? [link(at(prev), 'prev')] : []),
    ...(next ? [link(at(next), 'next')] : []),
    link(at(1), 'first'),
    link(at(totalPages), 'last'),
  ];
  return {
    'X-Total': String(total),
    'X-Total-Pages': String(totalPages),
    'X-Per-Page': String(perPage),
    'X-Page': String(page),
    'X-Next-Page': next ? String(next) : '',
    'X-Prev-Page': prev ? String(prev) : '',
    Link: links.join(', '),
  };
}

/**
 * GitLab leaves the totals out when a list has more than this many items: counting them all would cost
 * more than the page.
 */
export const MAX_COUNTED_ITEMS = 10_000;

/**
 * Offset headers for a list counted only up to MAX_COUNTED_ITEMS: beyond, `total` is null and, as in
 * GitLab, `X-Total`, `X-Total-Pages` and the `last` link are left out; `hasNext` says whether a next
 * page exists.
 */
export function boundedOffsetHeaders(
  total: number | null,
  hasNext: boolean,
  page: number,
  perPage: number,
  request: RequestInfo,
): Record<string, string> {
  if (total !== null) return offsetHeaders(total, page, perPage, request);
  const at = (p: number) => requestUrl(request, { page: String(p), per_page: String(perPage) });
  const links = [
    ...(page > 1 ? [link(at(page - 1), 'prev')] : []),
    ...(hasNext ? [link(at(page + 1), 'next')] : []),
    link(at(1), 'first'),
  ];
  return {
    'X-Per-Page': String(perPage),
    'X-Page': String(page),
    'X-Next-Page': hasNext ? String(page + 1) : '',
    'X-Prev-Page': page > 1 ? String(page - 1) : '',
    Link: links.join(', '),
  };
}

/**
 * Keyset pagination: the query must already be filtered past the cursor and ordered. One extra row
 * tells whether there is a next page; `cursor` turns the last item into the next link's parameters.
 */
export async function paginateKeyset<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  params: PageParams,
  request: RequestInfo,
  cursor: (last: T) => Record<string, string>,
): Promise<Page<T>> {
  const perPage = perPageOf(params);
  const rows = await query.take(perPage + 1).getMany();
  const items = rows.slice(0, perPage);
  const headers: Record<string, string> = { 'X-Per-Page': String(perPage) };
  if (rows.length > perPage) {
    const nextUrl = requestUrl(request, { ...cursor(items[items.length - 1]), page: undefined });
    headers.Link = link(nextUrl, 'next');
  }
  return { items, headers };
}

/** A page read in one statement, with each item's raw row (for columns added to the select). */
export interface RowsPage<T> extends Page<T> {
  rows: Array<Record<string, unknown>>;
}

type Row = Record<string, unknown>;

/**
 * How a page of a query whose joins are all to-one (one row per item) runs its statements, so that
 * LIMIT applies to the query itself instead of TypeORM's two statements (ids first, then rows).
 */
export interface RowReader<T extends ObjectLiteral> {
  /** The items and their raw rows, in order. */
  read(query: SelectQueryBuilder<T>): Promise<{ items: T[]; rows: Row[] }>;
  /** How many rows the query matches, whatever its order and limits. */
  count(query: SelectQueryBuilder<T>): Promise<number>;
  /** `read` with the count in the same statement (undefined when the page has no row to carry it). */
  readCounted?(query: SelectQueryBuilder<T>): Promise<{ items: T[]; rows: Row[]; total?: number }>;
}

/** Through TypeORM: its entities and raw rows, and its count. */
export function typeormRows<T extends ObjectLiteral>(): RowReader<T> {
  return {
    async read(query) {
      const { entities, raw } = (await query.getRawAndEntities()) as { entities: T[]; raw: Row[] };
      if (entities.length !== raw.length)
        throw new Error('a one-row-per-item page read more rows than items');
      return { items: entities, rows: raw };
    },
    count: (query) => query.getCount(),
  };
}

/**
 * `paginateOffset` for a query whose joins are all to-one: the page in one statement, and the total
 * from it when the page is the last one (not full); only a full or empty page counts apart, unless the
 * reader counts in the page's statement. A window count beside the rows would make PostgreSQL read and
 * sort every row instead of stopping at the page; a count in a scalar subquery runs once, apart.
 */
export async function paginateOffsetRows<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  params: PageParams,
  request: RequestInfo,
  reader: RowReader<T> = typeormRows(),
): Promise<RowsPage<T>> {
  const { page, perPage, offset } = pageWindow(params);
  const paged = query.offset(offset).limit(perPage);
  const {
    items,
    rows,
    total: counted,
  } = reader.readCounted
    ? await reader.readCounted(paged)
    : { ...(await reader.read(paged)), total: undefined };
  const lastPage = items.length > 0 && items.length < perPage;
  const total =
    counted ??
    (lastPage || (items.length === 0 && page === 1) ? offset + items.length : await reader.count(query));
  return { items, rows, headers: offsetHeaders(total, page, perPage, request) };
}

/** `paginateKeyset` in one statement, for a query whose joins are all to-one. */
export async function paginateKeysetRows<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  params: PageParams,
  request: RequestInfo,
  cursor: (last: T) => Record<string, string>,
  reader: RowReader<T> = typeormRows(),
): Promise<RowsPage<T>> {
  const perPage = perPageOf(params);
  const read = await reader.read(query.limit(perPage + 1));
  const items = read.items.slice(0, perPage);
  const headers: Record<string, string> = { 'X-Per-Page': String(perPage) };
  if (read.items.length > perPage) {
    const nextUrl = requestUrl(request, { ...cursor(items[items.length - 1]), page: undefined });
    headers.Link = link(nextUrl, 'next');
  }
  return { items, rows: read.rows.slice(0, perPage), headers };
}

/** How a handler answers with a page: 200, each item presented, and the page's headers. */
export function pagedResponse<T, R>(page: Page<T>, present: (item: T) => R) {
  return { status: 200 as const, body: page.items.map((item) => present(item)), headers: page.headers };
}
