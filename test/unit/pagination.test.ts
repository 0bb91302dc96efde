import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { describe, expect, it } from 'vitest';
import {
  boundedOffsetHeaders,
  offsetHeaders,
  pageWindow,
  paginateOffset,
  paginateOffsetRows,
  perPageOf,
  requestUrl,
  type RequestInfo,
} from '../../src/core/pagination.js';

const request: RequestInfo = {
  apiPath: '/projects',
  query: [
    ['search', 'a b'],
    ['page', '2'],
    ['per_page', '10'],
  ],
  externalUrl: 'https://forge.example.com',
};

describe('offset pagination headers', () => {
  it('gives every X-* header and absolute links', () => {
    const headers = offsetHeaders(25, 2, 10, request);
    expect(headers).toMatchObject({
      'X-Total': '25',
      'X-Total-Pages': '3',
      'X-Per-Page': '10',
      'X-Page': '2',
      'X-Next-Page': '3',
      'X-Prev-Page': '1',
    });
    expect(headers.Link.split(', ')).toEqual([
      '<https://forge.example.com/api/v4/projects?search=a+b&page=1&per_page=10>; rel="prev"',
      '<https://forge.example.com/api/v4/projects?search=a+b&page=3&per_page=10>; rel="next"',
      '<https://forge.example.com/api/v4/projects?search=a+b&page=1&per_page=10>; rel="first"',
      '<https://forge.example.com/api/v4/projects?search=a+b&page=3&per_page=10>; rel="last"',
    ]);
  });

  it('leaves next and prev empty at the edges', () => {
    const only = offsetHeaders(3, 1, 20, request);
    expect(only['X-Next-Page']).toBe('');
    expect(only['X-Prev-Page']).toBe('');
    expect(only.Link).not.toContain('rel="next"');
    expect(only['X-Total-Pages']).toBe('1');
  });

  it('counts an empty list as one page', () => {
    expect(offsetHeaders(0, 1, 20, request)['X-Total-Pages']).toBe('1');
  });
});

describe('per_page', () => {
  it.each([
    [undefined, 20],
    [5, 5],
    [100, 100],
    [500, 100],
    [0, 1],
  ])('%s gives %s', (perPage, expected) => {
    expect(perPageOf({ per_page: perPage })).toBe(expected);
  });
});

describe('request URLs', () => {
  it('replaces and removes parameters, keeping the rest in order', () => {
    expect(requestUrl(request, { page: undefined, id_after: '7' })).toBe(
      'https://forge.example.com/api/v4/projects?search=a+b&per_page=10&id_after=7',
    );
  });
});

describe('boundedOffsetHeaders', () => {
  const request = { apiPath: '/projects/1/merge_requests', query: [], externalUrl: 'http://x' };

  it('gives every header when the total is known', () => {
    expect(boundedOffsetHeaders(42, true, 1, 20, request)['X-Total']).toBe('42');
  });

  it('leaves the totals and the last link out when the list was not counted', () => {
    const headers = boundedOffsetHeaders(null, true, 2, 20, request);
    expect(headers).toEqual({
      'X-Per-Page': '20',
      'X-Page': '2',
      'X-Next-Page': '3',
      'X-Prev-Page': '1',
      Link:
        '<http://x/api/v4/projects/1/merge_requests?page=1&per_page=20>; rel="prev", ' +
        '<http://x/api/v4/projects/1/merge_requests?page=3&per_page=20>; rel="next", ' +
        '<http://x/api/v4/projects/1/merge_requests?page=1&per_page=20>; rel="first"',
    });
    expect(boundedOffsetHeaders(null, false, 1, 20, request)['X-Next-Page']).toBe('');
  });
});

/** The widest pages the contract lets through: `page` and `per_page` up to 2^31 - 1, per_page capped at 100. */
const FAR_PAGES: Array<[number, number | undefined, number, number]> = [
  // page, per_page, the page size used, the rows before the page
  [1, undefined, 20, 0],
  [1_000_000_000, 1, 1, 999_999_999],
  [1_000_000_000, 20, 20, 19_999_999_980],
  [21_474_837, 100, 100, 2_147_483_600],
  [2_147_483_647, 100, 100, 214_748_364_600],
  [2_147_483_647, 2_147_483_647, 100, 214_748_364_600],
];

describe('pages up to the bounds', () => {
  it.each(FAR_PAGES)('page %s, per_page %s: %s rows after %s', (page, perPage, size, offset) => {
    const window = pageWindow({ page, per_page: perPage });
    expect(window).toEqual({ page, perPage: size, offset });
    expect(Number.isSafeInteger(window.offset)).toBe(true);
  });

  /** A query builder that records the offset it is given and finds `total` rows, none on this page. */
  const emptyQuery = (total: number) => {
    const seen: { offset?: number } = {};
    const query = {
      skip: (offset: number) => ((seen.offset = offset), query),
      offset: (offset: number) => ((seen.offset = offset), query),
      take: () => query,
      limit: () => query,
      getManyAndCount: async () => [[], total],
    };
    return { seen, query: query as unknown as SelectQueryBuilder<ObjectLiteral> };
  };

  it.each(FAR_PAGES.slice(1))(
    'page %s, per_page %s past the end: empty, with every header',
    async (page, perPage, size, offset) => {
      for (const paginate of [
        (query: SelectQueryBuilder<ObjectLiteral>) =>
          paginateOffset(query, { page, per_page: perPage }, request),
        (query: SelectQueryBuilder<ObjectLiteral>) =>
          paginateOffsetRows(query, { page, per_page: perPage }, request, {
            read: async () => ({ items: [], rows: [] }),
            count: async () => 42,
          }),
      ]) {
        const { seen, query } = emptyQuery(42);
        const result = await paginate(query);
        expect(seen.offset).toBe(offset);
        expect(result.items).toEqual([]);
        const lastPage = Math.ceil(42 / size);
        expect(result.headers).toMatchObject({
          'X-Total': '42',
          'X-Total-Pages': String(lastPage),
          'X-Per-Page': String(size),
          'X-Page': String(page),
          'X-Next-Page': '',
          'X-Prev-Page': String(lastPage),
        });
        expect(result.headers.Link).toContain(`page=${lastPage}&per_page=${size}>; rel="last"`);
      }
    },
  );

  it.each(FAR_PAGES.slice(1))('page %s, per_page %s of an uncounted list: no next page', (page, perPage) => {
    const { perPage: size } = pageWindow({ page, per_page: perPage });
    const headers = boundedOffsetHeaders(null, false, page, size, request);
    expect(headers).toMatchObject({
      'X-Page': String(page),
      'X-Next-Page': '',
      'X-Prev-Page': String(page - 1),
    });
    expect(headers.Link).not.toContain('rel="next"');
  });
});
