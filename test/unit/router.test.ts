/**
 * The compiled router answers as openapi-backend's own router does, for every path of the contract:
 * the same operation, or none, and the same decoded path parameters.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createBackend, loadSpec, Router, type Backend } from '../../src/core/contract.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const VALUES = ['42', 'group%2Fproject', 'v1.0', 'a%20b', 'main'];

let backend: Backend;
let router: Router;

beforeAll(async () => {
  backend = await createBackend();
  router = new Router(backend);
});

/**
 * Each template with its parameters filled in several ways, the usual variants of a path, and the
 * methods to try on each (openapi-backend's router takes a millisecond or two per call).
 */
function samples(): Array<[string, string[]]> {
  const all: Array<[string, string[]]> = [
    ['/', METHODS],
    ['', ['get']],
    ['/nothing/here', ['get']],
    ['/projects/1/repository/archiveXzip', ['get']],
  ];
  for (const template of Object.keys(loadSpec().paths ?? {})) {
    const path = template.replace(/\{.*?\}/g, '42');
    all.push([path, METHODS], [template, ['get']]);
    for (const value of VALUES.slice(1)) all.push([template.replace(/\{.*?\}/g, value), ['get', 'post']]);
    for (const variant of [`${path}/`, `/${path}`, `${path}//`, `${path}?x=1`, ` ${path} `])
      all.push([variant, ['get']]);
  }
  return all;
}

function expected(method: string, path: string) {
  const operation = backend.router.matchOperation({ method, path, headers: {} });
  if (!operation) return undefined;
  const params = backend.router.parseRequest({ method, path, headers: {} }, operation).params;
  return { operationId: operation.operationId, params: { ...params } };
}

describe('the compiled router', () => {
  it('matches as openapi-backend does, on every path of the contract', () => {
    let compared = 0;
    for (const [path, methods] of samples()) {
      for (const method of methods) {
        const match = router.match(method, path);
        const actual = match && { operationId: match.operation.operationId, params: match.params };
        expect(actual, `${method} ${path}`).toEqual(expected(method, path));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('keeps a path parameter with an encoded slash as one segment, decoded', () => {
    const match = router.match('get', '/projects/group%2Fproject');
    expect(match?.operation.operationId).toBe('getProject');
    expect(match?.params).toEqual({ id: 'group/project' });
  });
});
