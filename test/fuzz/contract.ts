/** The operations of generated/openapi.json as the fuzzer needs them: parameters, body and statuses. */
import fs from 'node:fs';

export type Schema = Record<string, unknown>;

export interface FuzzParam {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
  example?: unknown;
}

export interface FuzzBody {
  /** Declared media types: application/json, application/x-www-form-urlencoded, multipart/form-data. */
  contentTypes: string[];
  schema: Schema;
  /** Property name to its schema, through allOf/anyOf/oneOf. */
  properties: Record<string, Schema>;
  required: string[];
  example?: Record<string, unknown>;
}

export interface FuzzOperation {
  operationId: string;
  method: string;
  /** The path template under /api/v4, e.g. `/projects/{id}/repository/tree`. */
  path: string;
  params: FuzzParam[];
  body?: FuzzBody;
  statuses: Set<number>;
}

type Json = Record<string, unknown>;

/** Replaces every internal `$ref` with its target; a reference back into itself becomes `{}`. */
function dereference(document: Json): (node: unknown) => unknown {
  const lookup = (ref: string) =>
    ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, key) => (node as Json)[key], document);
  const walk = (node: unknown, stack: string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => walk(item, stack));
    if (typeof node !== 'object' || node === null) return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') return stack.includes(ref) ? {} : walk(lookup(ref), [...stack, ref]);
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value, stack)]));
  };
  return (node) => walk(node, []);
}

export function schemaProperties(schema: Schema): Record<string, Schema> {
  const properties: Record<string, Schema> = { ...((schema.properties as Record<string, Schema>) ?? {}) };
  for (const combiner of ['allOf', 'anyOf', 'oneOf'])
    for (const member of (schema[combiner] as Schema[] | undefined) ?? [])
      Object.assign(properties, schemaProperties(member));
  return properties;
}

function schemaRequired(schema: Schema): string[] {
  const required = [...((schema.required as string[] | undefined) ?? [])];
  for (const member of (schema.allOf as Schema[] | undefined) ?? []) required.push(...schemaRequired(member));
  return required;
}

/** The JSON types a schema admits, through anyOf/oneOf/allOf. */
export function schemaTypes(schema: Schema | undefined): Set<string> {
  const types = new Set<string>();
  if (!schema) return types;
  if (typeof schema.type === 'string') types.add(schema.type);
  else if (Array.isArray(schema.type)) for (const type of schema.type) types.add(String(type));
  for (const combiner of ['anyOf', 'oneOf', 'allOf'])
    for (const member of (schema[combiner] as Schema[] | undefined) ?? [])
      for (const type of schemaTypes(member)) types.add(type);
  if (types.size === 0 && schema.properties) types.add('object');
  if (types.size === 0 && Array.isArray(schema.enum)) types.add(typeof schema.enum[0]);
  return types;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function loadOperations(specFile: string): FuzzOperation[] {
  const document = JSON.parse(fs.readFileSync(specFile, 'utf8')) as Json;
  const deref = dereference(document);
  const operations: FuzzOperation[] = [];
  for (const [path, rawItem] of Object.entries(document.paths as Json)) {
    const item = deref(rawItem) as Json;
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation?.operationId) continue;
      // Operation parameters override path-level ones of the same name and place.
      const byKey = new Map<string, Json>();
      for (const param of [
        ...((item.parameters as Json[]) ?? []),
        ...((operation.parameters as Json[]) ?? []),
      ])
        byKey.set(`${String(param.in)}:${String(param.name)}`, param);
      const params = [...byKey.values()]
        .filter((p) => p.in === 'path' || p.in === 'query' || p.in === 'header')
        .map((p) => ({
          name: String(p.name),
          in: p.in as FuzzParam['in'],
          required: p.required === true,
          schema: (p.schema as Schema) ?? {},
          example: p.example ?? (p.schema as Schema | undefined)?.example,
        }));
      const content = (operation.requestBody as Json | undefined)?.content as
        Record<string, { schema?: Schema; example?: Record<string, unknown> }> | undefined;
      let body: FuzzBody | undefined;
      if (content) {
        const json = content['application/json'] ?? Object.values(content)[0];
        const schema = json.schema ?? {};
        body = {
          contentTypes: Object.keys(content),
          schema,
          properties: schemaProperties(schema),
          required: schemaRequired(schema),
          example: json.example,
        };
      }
      operations.push({
        operationId: String(operation.operationId),
        method: method.toUpperCase(),
        path,
        params,
        body,
        statuses: new Set(Object.keys(operation.responses as Json).map(Number)),
      });
    }
  }
  return operations;
}
