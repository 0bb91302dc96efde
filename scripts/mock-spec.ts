/**
 * The spec as `make mock` serves it. Three differences from generated/openapi.json, all about how Prism
 * reads a spec, none about the API:
 *
 * - Prism ignores the path of the server URL, so it would answer `/projects` where GitLab clients call
 *   `/api/v4/projects`: every path moves under `/api/v4`.
 * - Query, path and header parameters declared boolean also take the spellings the server accepts
 *   (`True`, `f`, `1`, `no`...: src/core/params.ts), because python-gitlab sends `recursive=False`.
 * - A list's pagination headers describe the only page of the example Prism serves, written by the
 *   server's own code for this path: no `rel="next"`, so clients asking for all pages finish.
 *
 *   node --import tsx scripts/mock-spec.ts [in=generated/openapi.json] [out=.forge-test/mock-openapi.json]
 *     [base=http://127.0.0.1:4010]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PER_PAGE, offsetHeaders } from '../src/core/pagination.js';
import { FALSE_WORDS, TRUE_WORDS } from '../src/core/params.js';

export const API_PREFIX = '/api/v4';
/** Where `make mock` listens. */
export const MOCK_BASE_URL = 'http://127.0.0.1:4010';

type Json = Record<string, unknown>;
interface Spec {
  paths: Record<string, Json>;
  servers?: unknown;
  components?: Record<string, Record<string, unknown>>;
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `#/components/parameters/Page` → that object; anything else as it is. */
function resolve(spec: Spec, value: unknown): unknown {
  if (!isObject(value) || typeof value.$ref !== 'string' || !value.$ref.startsWith('#/')) return value;
  let target: unknown = spec;
  for (const part of value.$ref.slice(2).split('/'))
    target = isObject(target) ? target[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return target;
}

const caseless = (word: string) =>
  [...word].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join('');

/** A string the server reads as a boolean, as a JSON Schema pattern (no flags, so spelled caseless). */
export const BOOLEAN_WORD_PATTERN = `^\\s*(?:${[...TRUE_WORDS, ...FALSE_WORDS].map(caseless).join('|')})\\s*$`;

function widenBooleans(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('boolean'))
    return { anyOf: [schema, { type: 'string', pattern: BOOLEAN_WORD_PATTERN }] };
  const widened: Json = { ...schema };
  if (schema.items) widened.items = widenBooleans(schema.items);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    if (Array.isArray(schema[key])) widened[key] = schema[key].map(widenBooleans);
  if (isObject(schema.properties))
    widened.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, property]) => [name, widenBooleans(property)]),
    );
  return widened;
}

function widenParameter(parameter: unknown): unknown {
  if (!isObject(parameter) || !['query', 'path', 'header'].includes(String(parameter.in))) return parameter;
  return { ...parameter, schema: widenBooleans(parameter.schema) };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The value a parameter's own example gives, for filling a path template. */
function exampleOf(parameter: Json): unknown {
  const schema = isObject(parameter.schema) ? parameter.schema : {};
  if (parameter.example !== undefined) return parameter.example;
  const examples = isObject(parameter.examples) ? Object.values(parameter.examples) : [];
  const first = examples.find((example) => isObject(example) && example.value !== undefined);
  if (isObject(first)) return first.value;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  return 1;
}

/** The example body Prism serves by default: the media type's `example`, else its first `examples`. */
function servedExample(spec: Spec, media: unknown): unknown {
  if (!isObject(media)) return undefined;
  if (media.example !== undefined) return media.example;
  const first = isObject(media.examples) ? Object.values(media.examples)[0] : undefined;
  const example = resolve(spec, first);
  return isObject(example) ? example.value : undefined;
}

function describeOnlyPage(spec: Spec, route: string, parameters: Json[], response: Json, baseUrl: string) {
  const headers = isObject(response.headers) ? response.headers : {};
  if (!('Link' in headers) && !('X-Next-Page' in headers)) return response;
  const body = servedExample(spec, isObject(response.content) ? response.content['application/json'] : {});
  const total = Array.isArray(body) ? body.length : 0;
  const apiPath = route.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const parameter = parameters.find((p) => p.in === 'path' && p.name === name);
    return encodeURIComponent(String(parameter ? exampleOf(parameter) : 1));
  });
  const values: Record<string, string> = offsetHeaders(total, 1, DEFAULT_PER_PAGE, {
    apiPath,
    query: [],
    externalUrl: baseUrl,
  });
  const described = Object.fromEntries(
    Object.entries(headers).map(([name, header]) => {
      const resolved = resolve(spec, header);
      if (!(name in values) || !isObject(resolved)) return [name, header];
      const schema = isObject(resolved.schema) ? resolved.schema : {};
      const value = schema.type === 'integer' ? Number(values[name]) : values[name];
      return [name, { ...resolved, example: value }];
    }),
  );
  return { ...response, headers: described };
}

export function mockSpec<S extends Spec>(spec: S, options: { baseUrl?: string } = {}): S {
  const baseUrl = options.baseUrl ?? MOCK_BASE_URL;
  const copy = structuredClone(spec);
  const components = copy.components ?? {};
  if (components.parameters)
    components.parameters = Object.fromEntries(
      Object.entries(components.parameters).map(([name, parameter]) => [name, widenParameter(parameter)]),
    );
  const paths = Object.fromEntries(
    Object.entries(copy.paths).map(([route, item]) => {
      const shared = Array.isArray(item.parameters) ? item.parameters : [];
      const widenedItem: Json = { ...item, parameters: shared.map(widenParameter) };
      if (!Array.isArray(item.parameters)) delete widenedItem.parameters;
      for (const method of METHODS) {
        const operation = item[method];
        if (!isObject(operation)) continue;
        const own = Array.isArray(operation.parameters) ? operation.parameters : [];
        const parameters = [...shared, ...own].map((parameter) => resolve(copy, parameter)).filter(isObject);
        const responses = isObject(operation.responses) ? operation.responses : {};
        widenedItem[method] = {
          ...operation,
          ...(Array.isArray(operation.parameters) ? { parameters: own.map(widenParameter) } : {}),
          responses: Object.fromEntries(
            Object.entries(responses).map(([status, response]) => [
              status,
              isObject(response) && !response.$ref
                ? describeOnlyPage(copy, route, parameters, response, baseUrl)
                : response,
            ]),
          ),
        };
      }
      return [`${API_PREFIX}${route}`, widenedItem];
    }),
  );
  return {
    ...copy,
    servers: [{ url: '/', description: 'The Prism mock; paths carry /api/v4 as GitLab’s do.' }],
    paths,
  };
}

export function writeMockSpec(input: string, output: string, options: { baseUrl?: string } = {}): string {
  const spec = JSON.parse(fs.readFileSync(input, 'utf8')) as Spec;
  fs.mkdirSync(path.dirname(output), { recursive: true });
  fs.writeFileSync(output, JSON.stringify(mockSpec(spec, options)));
  return output;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [input = 'generated/openapi.json', output = '.forge-test/mock-openapi.json', baseUrl] =
    process.argv.slice(2);
  process.stdout.write(`${writeMockSpec(input, output, { baseUrl })}\n`);
}
