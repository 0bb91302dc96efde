/**
 * GitLab accepts parameters as JSON, form fields and query string, mixed on one call, with Rack's
 * bracket notation, and coerces string values by the declared type. All of it happens here, once,
 * driven by the operation's schemas.
 */
import { formPairs, malformed, MAX_PARAM_DEPTH } from './strings.js';

export type ParamObject = Record<string, unknown>;
type Schema = Record<string, unknown>;

const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const isPlainObject = (value: unknown): value is ParamObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Builds nested params from `name=value` pairs, as Rack does (`a[]`, `a[b]`, `a[][b]`). */
export function parseBracketPairs(pairs: Iterable<[string, unknown]>): ParamObject {
  const params: ParamObject = {};
  for (const [name, value] of pairs) {
    // Counted before any recursion: `a[a][a]…` a hundred thousand deep must not reach the stack.
    if (bracketDepth(name) > MAX_PARAM_DEPTH) throw malformed('parameters nested too deeply');
    assignBracketed(params, name, value);
  }
  return params;
}

function bracketDepth(name: string): number {
  let depth = 0;
  for (let i = name.indexOf('['); i >= 0 && depth <= MAX_PARAM_DEPTH; i = name.indexOf('[', i + 1)) depth++;
  return depth;
}

function assignBracketed(params: ParamObject, name: string, value: unknown): void {
  const head = /^[[\]]*([^[\]]+)\]*/.exec(name);
  if (!head) return;
  const key = head[1];
  if (UNSAFE_KEYS.has(key)) return;
  const rest = name.slice(head[0].length);
  if (rest === '' || rest === '[') {
    params[key] = value;
    return;
  }
  if (rest === '[]') {
    const list = Array.isArray(params[key]) ? (params[key] as unknown[]) : (params[key] = []);
    (list as unknown[]).push(value);
    return;
  }
  const arrayOfHashes = /^\[\]\[([^[\]]+)\]$/.exec(rest) ?? /^\[\](.+)$/.exec(rest);
  if (arrayOfHashes) {
    const childKey = arrayOfHashes[1];
    const list = (Array.isArray(params[key]) ? params[key] : (params[key] = [])) as unknown[];
    const last = list[list.length - 1];
    // A repeated key starts the next hash, as in Rack.
    if (isPlainObject(last) && !hasNestedKey(last, childKey)) assignBracketed(last, childKey, value);
    else {
      const fresh: ParamObject = {};
      assignBracketed(fresh, childKey, value);
      list.push(fresh);
    }
    return;
  }
  const child = isPlainObject(params[key]) ? (params[key] as ParamObject) : (params[key] = {});
  assignBracketed(child as ParamObject, rest, value);
}

function hasNestedKey(object: ParamObject, bracketedKey: string): boolean {
  const parts = bracketedKey.split(/[[\]]+/).filter(Boolean);
  let current: unknown = object;
  for (const part of parts) {
    if (!isPlainObject(current) || !(part in current)) return false;
    current = current[part];
  }
  return true;
}

/** Query pairs from a raw query string, `+` as space, each part decoded; malformed ones are refused. */
export function queryPairs(querystring: string): Array<[string, string]> {
  return formPairs(querystring);
}

/** Rack merges body over query; path parameters (applied by the caller) win over both. */
export function mergeParams(query: ParamObject, body: ParamObject): ParamObject {
  return { ...query, ...body };
}

/** The spellings of a boolean GitLab accepts in query and form values, compared case-insensitively. */
export const TRUE_WORDS: ReadonlySet<string> = new Set(['true', '1', 't', 'yes', 'y', 'on']);
export const FALSE_WORDS: ReadonlySet<string> = new Set(['false', '0', 'f', 'no', 'n', 'off']);

export function parseBoolean(value: string): boolean | undefined {
  const word = value.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return undefined;
}

function schemaTypes(schema: Schema | undefined): Set<string> {
  const types = new Set<string>();
  if (!schema) return types;
  const type = schema.type;
  if (typeof type === 'string') types.add(type);
  else if (Array.isArray(type)) for (const t of type) types.add(String(t));
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list))
      for (const member of list) for (const t of schemaTypes(member as Schema)) types.add(t);
  }
  if (types.size === 0 && (schema.properties || schema.additionalProperties)) types.add('object');
  return types;
}

/** The schema of `key` within an object schema, looking through allOf/anyOf/oneOf. */
export function propertySchema(schema: Schema | undefined, key: string): Schema | undefined {
  if (!schema) return undefined;
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (properties?.[key]) return properties[key];
  for (const combiner of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = schema[combiner];
    if (!Array.isArray(list)) continue;
    for (const member of list) {
      const found = propertySchema(member as Schema, key);
      if (found) return found;
    }
  }
  return isPlainObject(schema.additionalProperties) ? (schema.additionalProperties as Schema) : undefined;
}

function itemsSchema(schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  if (isPlainObject(schema.items)) return schema.items as Schema;
  for (const combiner of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[combiner];
    if (!Array.isArray(list)) continue;
    for (const member of list) {
      const found = itemsSchema(member as Schema);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Converts form and query strings to the declared type. Values that do not convert are left as they
 * are, so validation reports them with the parameter's name.
 */
export function coerce(value: unknown, schema: Schema | undefined): unknown {
  if (value === undefined || !schema) return value;
  const types = schemaTypes(schema);
  if (typeof value === 'string') {
    if (types.has('string')) return value;
    if (types.has('null') && value === '') return null;
    if (types.has('boolean')) {
      const parsed = parseBoolean(value);
      if (parsed !== undefined) return parsed;
    }
    const numeric = types.has('integer') || types.has('number');
    if (numeric && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
    if (types.has('array')) return [coerce(value, itemsSchema(schema))];
    // Grape reads `1e3`, `0x10` or ` ` as no integer at all; NaN fails validation as "x is invalid"
    // (the validator would otherwise read them as numbers of its own and let the text through).
    if (numeric && value !== '') return NaN;
    return value;
  }
  if (typeof value === 'number' && types.has('boolean') && !types.has('number') && !types.has('integer')) {
    if (value === 1 || value === 0) return value === 1;
  }
  if (typeof value === 'number' && types.has('string') && !types.has('number') && !types.has('integer')) {
    return String(value);
  }
  if (Array.isArray(value)) {
    if (types.has('array')) return value.map((item) => coerce(item, itemsSchema(schema)));
    return value;
  }
  if (isPlainObject(value)) {
    // `a[0]=x&a[1]=y` arrives as an object with index keys.
    if (types.has('array') && !types.has('object') && Object.keys(value).every((k) => /^\d+$/.test(k))) {
      return Object.keys(value)
        .sort((a, b) => Number(a) - Number(b))
        .map((k) => coerce(value[k], itemsSchema(schema)));
    }
    if (types.has('object')) {
      const result: ParamObject = {};
      for (const [key, child] of Object.entries(value))
        result[key] = coerce(child, propertySchema(schema, key));
      return result;
    }
  }
  return value;
}
