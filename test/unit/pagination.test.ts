import { describe, expect, it } from 'vitest';
import {
  boundedOffsetHeaders,
  offsetHeaders,
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
