import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ErrorObject } from 'ajv';
import { OpenAPIBackend, type Document, type Operation } from 'openapi-backend';
import { isFilePath } from './strings.js';

// ajv-formats is CommonJS: its default export arrives as the module itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export type Backend = OpenAPIBackend;
export type { Operation };

/** generated/openapi.json, found from src/ (tsx, tests) and from dist/src/ (the build) alike. */
export const specPath = [
  new URL('../../generated/openapi.json', import.meta.url),
  new URL('../../../generated/openapi.json', import.meta.url),
]
  .map((url) => fileURLToPath(url))
  .find((candidate) => fs.existsSync(candidate)) as string;

export function loadSpec(): Document {
  return JSON.parse(fs.readFileSync(specPath, 'utf8')) as Document;
}

/** The bundled contract, dereferenced, with JSON Schema 2020-12 validation (OpenAPI 3.1). */
export async function createBackend(document: Document = loadSpec()): Promise<Backend> {
  const backend = new OpenAPIBackend({
    definition: document,
    apiRoot: '/',
    strict: false,
    validate: true,
    ignoreTrailingSlashes: true,
    // Validators are compiled per operation on first use: startup takes milliseconds instead of seconds
    // for the whole contract. The bundle has internal references only, which quick mode dereferences.
    quick: true,
    customizeAjv: (_ajv: unknown, ajvOpts: object) => {
      const ajv = new Ajv2020({ ...ajvOpts, strict: false, allErrors: true });
      addFormats(ajv);
      // `format: file-path` marks paths inside a repository: a `..` component is refused.
      ajv.addFormat('file-path', isFilePath);
      return ajv as never;
    },
  });
  // openapi-backend checks documents against the OpenAPI 3.0 schema; Redocly lints ours as 3.1 instead.
  backend.validateDefinition = () => document;
  await backend.init();
  return backend;
}

const operationsById = new WeakMap<Backend, Map<string, Operation>>();

/**
 * The operation of an id, from a table built once per backend: openapi-backend's `getOperation` rebuilds
 * every operation of the contract on each call (about a millisecond; response validation asks once per
 * response). Same objects as its `getOperations()` gives, which nothing changes.
 */
export function operationById(backend: Backend, operationId: string): Operation | undefined {
  let table = operationsById.get(backend);
  if (!table) {
    table = new Map();
    for (const operation of backend.router.getOperations())
      if (operation.operationId && !table.has(operation.operationId))
        table.set(operation.operationId, operation);
    operationsById.set(backend, table);
  }
  return table.get(operationId);
}

/** A matched route: its operation and path parameters, decoded. */
export interface RouteMatch {
  operation: Operation;
  params: Record<string, string>;
}

interface Route {
  operation: Operation;
  pattern: RegExp;
  names: string[];
  /** The path's segments, which each parameter matches one of; undefined when a `.` may match a `/`. */
  segments?: number;
}

const segmentCount = (path: string) => path.split('/').length;

/**
 * openapi-backend's routing, compiled once: its router rebuilds every operation and regular expression
 * on each call. Same rules: a path equal to a template first (the first such operation), then templates
 * whose parameters match one segment each, the most specific (longest without its parameters) first;
 * path parameters are URI-decoded.
 */
export class Router {
  private readonly exact = new Map<string, Map<string, Route>>();
  private readonly templates = new Map<string, Route[]>();
  /** The templates that can match a path of so many segments, by method, in the same order. */
  private readonly bySegments = new Map<string, Map<number, Route[]>>();
  private readonly apiRoot: string;
  private readonly ignoreTrailingSlashes: boolean;

  constructor(backend: Backend) {
    this.apiRoot = backend.router.apiRoot;
    this.ignoreTrailingSlashes = backend.ignoreTrailingSlashes;
    const specificity = (path: string) => path.replace(/\{.*?\}/g, '').length;
    for (const operation of backend.router.getOperations()) {
      const names = [...operation.path.matchAll(/\{(.*?)\}/g)].map((m) => m[1]);
      // Both of openapi-backend's parameter syntaxes agree only on plain, distinct names.
      if (names.some((name, i) => !/^[A-Za-z0-9_-]+$/.test(name) || names.indexOf(name) !== i))
        throw new Error(`${operation.path}: path parameters must be distinct plain names`);
      // A parameter marked `x-wildcard` (GitLab's `*artifact_path`) takes the rest of the path, slashes too.
      const wildcards = new Set(
        ((operation.parameters ?? []) as Array<{ in?: string; name?: string; 'x-wildcard'?: boolean }>)
          .filter((parameter) => parameter.in === 'path' && parameter['x-wildcard'] === true)
          .map((parameter) => parameter.name),
      );
      // Not escaped, as openapi-backend does not escape them: `.` in a template matches any character.
      const pattern = new RegExp(
        `^${operation.path.replace(/\{(.*?)\}/g, (_, name: string) => (wildcards.has(name) ? '(.+)' : '([^/]+)'))}$`,
      );
      const literal = operation.path.replace(/\{.*?\}/g, '');
      const segments =
        wildcards.size > 0 || /[.*+?^$()|[\]\\]/.test(literal) ? undefined : segmentCount(operation.path);
      const route = { operation, pattern, names, segments };
      const exact = this.exact.get(operation.method) ?? new Map<string, Route>();
      this.exact.set(operation.method, exact);
      if (!exact.has(operation.path)) exact.set(operation.path, route);
      const templates = this.templates.get(operation.method) ?? [];
      this.templates.set(operation.method, templates);
      templates.push(route);
    }
    // Array.prototype.sort is stable: equally specific templates keep the contract's order.
    for (const routes of this.templates.values())
      routes.sort((a, b) => specificity(b.operation.path) - specificity(a.operation.path));
    // Only templates of the path's length are tried: a hot route no longer waits behind hundreds of others.
    for (const [method, routes] of this.templates) {
      const lists = new Map<number, Route[]>();
      const counts = new Set(routes.map((route) => route.segments).filter((n) => n !== undefined));
      for (const count of counts)
        lists.set(
          count,
          routes.filter((route) => route.segments === count || route.segments === undefined),
        );
      this.bySegments.set(method, lists);
    }
  }

  private candidates(method: string, path: string): Route[] {
    const lists = this.bySegments.get(method);
    if (!lists) return [];
    return (
      lists.get(segmentCount(path)) ??
      (this.templates.get(method) ?? []).filter((r) => r.segments === undefined)
    );
  }

  /** The operation for a lower-case method and a path below the API root, or undefined. */
  match(method: string, rawPath: string): RouteMatch | undefined {
    const path = this.normalize(rawPath);
    let route = this.exact.get(method)?.get(path);
    let values = route?.pattern.exec(path);
    for (const candidate of route ? [] : this.candidates(method, path)) {
      values = candidate.pattern.exec(path);
      if (values) {
        route = candidate;
        break;
      }
    }
    if (!route || !values) return undefined;
    const params: Record<string, string> = {};
    route.names.forEach((name, i) => (params[name] = decodeURIComponent(values[i + 1])));
    return { operation: route.operation, params };
  }

  private normalize(rawPath: string): string {
    let path = rawPath.trim();
    if (!path.startsWith('/')) path = `/${path}`;
    path = path.split('?')[0];
    if (path.startsWith(this.apiRoot)) path = `/${path.slice(this.apiRoot.length).replace(/^\//, '')}`;
    while (this.ignoreTrailingSlashes && path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    return path;
  }
}

export interface RequestInput {
  /** Path parameters, coerced to their declared types. */
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
}

/**
 * openapi-backend's request validation (its compiled validators, its parameter document) without
 * parsing the request again: the pipeline has the path parameters and the query already. The
 * validators coerce in place, so they get copies.
 */
export function validateRequest(backend: Backend, operation: Operation, input: RequestInput) {
  const query = Object.keys(input.query).length === 0 ? {} : structuredClone(input.query);
  for (const parameter of operation.parameters ?? []) {
    const {
      in: where,
      name,
      schema,
    } = parameter as { in: string; name: string; schema?: { type?: unknown } };
    if (where === 'query' && schema?.type === 'array' && typeof query[name] === 'string')
      query[name] = [query[name]];
  }
  const parameters = {
    path: { ...input.path },
    query,
    header: { 'content-type': 'application/json' },
    cookie: {},
    requestBody: input.body,
  };
  const errors: ErrorObject[] = [];
  for (const validate of backend.validator.getRequestValidatorsForOperation(operation.operationId!) ?? []) {
    validate(parameters);
    if (validate.errors) errors.push(...validate.errors);
  }
  return errors;
}
