/**
 * `spec:inputs`: the header's declarations checked against the values given (GitLab's messages), then
 * `$[[ inputs.name | function(args) ]]` blocks interpolated into the configuration's keys and values.
 */
import { RE2JS } from 're2js';
import { expandVariables } from './expand.js';
import { isPlainObject, ReferenceTag } from './parse.js';

const TYPES = ['array', 'boolean', 'number', 'string'];
const INPUT_KEYS = ['default', 'description', 'options', 'regex', 'type', 'rules'];

export interface InputsResult {
  values: Record<string, unknown>;
  errors: string[];
}

/** Checks the given values against `spec:inputs` and answers the value of every input. */
export function resolveInputs(spec: unknown, given: Record<string, unknown>): InputsResult {
  const errors: string[] = [];
  const values: Record<string, unknown> = {};
  const specs = isPlainObject(spec) ? spec : {};
  const unknown = Object.keys(given).filter((k) => !(k in specs));
  if (unknown.length > 0) errors.push(`unknown input arguments: ${unknown.join(', ')}`);
  for (const [name, raw] of Object.entries(specs)) {
    const def = raw === null || raw === undefined ? {} : raw;
    if (!isPlainObject(def)) {
      errors.push(`header:spec:inputs:${name} config must be a hash`);
      continue;
    }
    const extra = Object.keys(def).filter((k) => !INPUT_KEYS.includes(k));
    if (extra.length > 0) {
      errors.push(`header:spec:inputs:${name} config contains unknown keys: ${extra.join(', ')}`);
      continue;
    }
    const type = def.type === undefined ? 'string' : def.type;
    if (typeof type !== 'string' || !TYPES.includes(type)) {
      errors.push(`unknown input specification for \`${name}\` (valid types: ${TYPES.join(', ')})`);
      continue;
    }
    const err = checkInput(name, type, def, given[name]);
    if (typeof err === 'string') errors.push(`\`${name}\` input: ${err}`);
    else values[name] = err.value;
  }
  return { values, errors };
}

function checkInput(
  name: string,
  type: string,
  def: Record<string, unknown>,
  provided: unknown,
): string | { value: unknown } {
  const required = !('default' in def);
  if (required && (provided === undefined || provided === null))
    return 'required value has not been provided';
  if (!required && !validType(type, def.default)) return `default value is not a ${type}`;
  const value = provided === undefined || provided === null ? def.default : coerce(type, provided);
  if (!validType(type, value)) return `provided value is not a ${type}`;
  if (Array.isArray(def.options) && !def.options.some((o) => o === value)) {
    return `\`${String(value)}\` cannot be used because it is not in the list of allowed options`;
  }
  if (typeof def.regex === 'string' && type === 'string') {
    const source = def.regex.replace(/^\/(.*)\/$/s, '$1');
    let ok = false;
    try {
      ok = RE2JS.compile(source).matcher(String(value)).find();
    } catch {
      return 'invalid regular expression';
    }
    if (!ok) return 'provided value does not match required RegEx pattern';
  }
  void name;
  return { value };
}

/** Values from a form or a schedule arrive as strings; GitLab's typed API sends them typed. */
function coerce(type: string, v: unknown): unknown {
  if (typeof v !== 'string') return v;
  if (type === 'number' && /^-?\d+(\.\d+)?$/.test(v.trim())) return Number(v);
  if (type === 'boolean' && (v === 'true' || v === 'false')) return v === 'true';
  return v;
}

function validType(type: string, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return Array.isArray(v);
  }
}

const BLOCK = /\$\[\[\s*(\S.*?\S)\s*\]\]/g;
const WHOLE_BLOCK = /^\$\[\[\s*(\S(?:(?!\]\]).)*?\S)\s*\]\]$/s;
const MAX_BLOCKS = 10_000;

interface InterpolationState {
  inputs: Record<string, unknown>;
  variables: Record<string, string>;
  errors: string[];
  blocks: number;
}

/** Replaces every `$[[ ... ]]` in keys and values; a value that is one block keeps the input's type. */
export function interpolate(
  config: unknown,
  inputs: Record<string, unknown>,
  variables: Record<string, string>,
): { value: unknown; errors: string[] } {
  const state: InterpolationState = { inputs, variables, errors: [], blocks: 0 };
  const value = walk(config, state);
  return { value, errors: [...new Set(state.errors)] };
}

function walk(node: unknown, state: InterpolationState): unknown {
  if (typeof node === 'string') return interpolateString(node, state);
  if (Array.isArray(node)) return node.map((n) => walk(n, state));
  if (node instanceof ReferenceTag)
    return new ReferenceTag(node.path.map((p) => String(interpolateString(p, state))));
  if (isPlainObject(node)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) out[String(interpolateString(k, state))] = walk(v, state);
    return out;
  }
  return node;
}

function interpolateString(text: string, state: InterpolationState): unknown {
  if (!text.includes('$[[')) return text;
  const whole = WHOLE_BLOCK.exec(text);
  if (whole) {
    const v = evaluateBlock(whole[1] as string, state);
    return v === SKIPPED ? text : v;
  }
  return text.replace(BLOCK, (block, inner: string) => {
    const v = evaluateBlock(inner, state);
    if (v === SKIPPED) return block;
    return typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v);
  });
}

/** `$[[ matrix.X ]]` is left for `needs:parallel:matrix` to read, as GitLab leaves it. */
const SKIPPED = Symbol('skipped');
const MAX_FUNCTIONS = 3;

function evaluateBlock(inner: string, state: InterpolationState): unknown {
  if (++state.blocks > MAX_BLOCKS) {
    state.errors.push('too many interpolation blocks');
    return undefined;
  }
  const [access = '', ...functions] = inner.split('|').map((s) => s.trim());
  const objects = access.split('.');
  if (objects[0] === 'matrix') return SKIPPED;
  if (objects.length <= 1) {
    state.errors.push('invalid interpolation access pattern');
    return undefined;
  }
  let value: unknown = { inputs: state.inputs };
  for (const key of objects) {
    if (!isPlainObject(value) || !Object.prototype.hasOwnProperty.call(value, key)) {
      state.errors.push(`unknown interpolation key: \`${key}\``);
      return undefined;
    }
    value = value[key];
  }
  if (functions.length > MAX_FUNCTIONS) {
    state.errors.push('too many functions in interpolation block');
    return undefined;
  }
  for (const fn of functions) value = applyFunction(fn, value, state);
  return value;
}

function applyFunction(fn: string, value: unknown, state: InterpolationState): unknown {
  if (fn === 'expand_vars' && typeof value === 'string')
    return expandVariables(value, state.variables, { keepUnknown: true });
  if (fn === 'posix_escape' && typeof value === 'string')
    return value.replace(/([^A-Za-z0-9_\-.,:/@\n])/g, '\\$1');
  const t = /^truncate\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(fn);
  if (t && typeof value === 'string') return value.slice(Number(t[1]), Number(t[1]) + Number(t[2]));
  state.errors.push(
    `no function matching \`${fn}\`: check that the function name, arguments, and types are correct`,
  );
  return value;
}
