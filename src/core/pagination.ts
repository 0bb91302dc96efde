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
  const perPage = perPageOf(params);
  const page = Math.max(params.page ?? 1, 1);
  const [items, total] = await query
    .skip((page - 1) * perPage)
    .take(perPage)
    .getManyAndCount();
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
