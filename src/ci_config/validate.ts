/**
 * Keyword checks with GitLab's messages (`<location> <message>`, the location being `jobs:name` or
 * `jobs:name:keyword`), each answering the keyword normalised for the runner, or undefined when wrong.
 */
import { isValidExpression } from './expression.js';
import { parseDuration, ONE_WEEK } from './duration.js';
import { isPlainObject } from './parse.js';

export type Errors = string[];

const NESTED_STRINGS = 'config should be a string or a nested array of strings up to 10 levels deep';

/** `script`, `before_script`, `after_script`, hooks: a string or nested arrays of strings, flattened. */
export function commands(value: unknown, location: string, errors: Errors): string[] | undefined {
  const out: string[] = [];
  const visit = (v: unknown, depth: number): boolean => {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
      out.push(String(v));
      return true;
    }
    if (Array.isArray(v) && depth < 10) return v.every((item) => visit(item, depth + 1));
    return false;
  };
  if (!visit(value, 0)) {
    errors.push(`${location} ${NESTED_STRINGS}`);
    return undefined;
  }
  return out;
}

export function arrayOfStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

export function unknownKeys(
  value: Record<string, unknown>,
  allowed: readonly string[],
  location: string,
  errors: Errors,
): boolean {
  const extra = Object.keys(value).filter((k) => !allowed.includes(k));
  if (extra.length === 0) return false;
  errors.push(`${location} config contains unknown keys: ${extra.join(', ')}`);
  return true;
}

/** Variables: values are strings or numbers, or hashes with the allowed data keys. */
export function variables(
  value: unknown,
  location: string,
  errors: Errors,
  dataKeys: readonly string[],
): { values: Record<string, string>; data: Record<string, Record<string, unknown>> } | undefined {
  const bad = () => {
    errors.push(`${location} config should be a hash of key value pairs, value can be a hash`);
    return undefined;
  };
  if (value === null || value === undefined) return { values: {}, data: {} };
  if (!isPlainObject(value)) return bad();
  const values: Record<string, string> = {};
  const data: Record<string, Record<string, unknown>> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string' || typeof v === 'number') {
      values[key] = String(v);
    } else if (isPlainObject(v)) {
      if (Object.keys(v).some((k) => !dataKeys.includes(k))) return bad();
      if (v.value !== undefined && typeof v.value !== 'string' && typeof v.value !== 'number') return bad();
      if (v.options !== undefined && !arrayOfStrings(v.options)) return bad();
      values[key] = v.value === undefined ? '' : String(v.value);
      data[key] = v;
      if (Array.isArray(v.options) && !v.options.includes(values[key])) {
        errors.push(`${location}:${key} config value must be present in options`);
      }
    } else if (v === null) {
      values[key] = '';
    } else {
      return bad();
    }
  }
  return { values, data };
}

export function duration(
  value: unknown,
  location: string,
  key: string,
  errors: Errors,
  limit?: number,
): string | undefined {
  const seconds = parseDuration(value);
  if (seconds === null) {
    errors.push(`${location} ${key} should be a duration`);
    return undefined;
  }
  if (limit !== undefined && seconds > limit) {
    errors.push(`${location} ${key} should not exceed the limit`);
    return undefined;
  }
  return String(value);
}

const RULE_KEYS = [
  'if',
  'changes',
  'exists',
  'when',
  'start_in',
  'allow_failure',
  'variables',
  'needs',
  'interruptible',
];
export const RULE_WHEN = ['on_success', 'on_failure', 'always', 'never', 'manual', 'delayed'];

/** `rules:` of a job (or `workflow:rules`, with its narrower keys). */
export function rules(
  value: unknown,
  location: string,
  errors: Errors,
  opts: { keys?: readonly string[]; when?: readonly string[] } = {},
): Array<Record<string, unknown>> | undefined {
  if (!Array.isArray(value)) {
    errors.push(`${location} config should be an array of hashes`);
    return undefined;
  }
  const out: Array<Record<string, unknown>> = [];
  const at = `${location}:rule`;
  const before = errors.length;
  for (const raw of value.flat(10)) {
    if (!isPlainObject(raw)) {
      errors.push(`${at} config should be a hash`);
      continue;
    }
    if (unknownKeys(raw, opts.keys ?? RULE_KEYS, at, errors)) continue;
    if (raw.if !== undefined && !isValidExpression(raw.if)) errors.push(`${at} if invalid expression syntax`);
    const allowedWhen = opts.when ?? RULE_WHEN;
    if (raw.when !== undefined && !allowedWhen.includes(String(raw.when)))
      errors.push(`${at} when unknown value: ${String(raw.when)}`);
    if (raw.when === 'delayed') duration(raw.start_in, at, 'start in', errors, ONE_WEEK);
    else if (raw.start_in !== undefined) errors.push(`${at} start in must be blank`);
    if (raw.allow_failure !== undefined && typeof raw.allow_failure !== 'boolean')
      errors.push(`${at} allow_failure should be a boolean value`);
    if (raw.interruptible !== undefined && typeof raw.interruptible !== 'boolean')
      errors.push(`${at} interruptible should be a boolean value`);
    const changes = raw.changes === undefined ? undefined : changesOf(raw.changes, `${at}:changes`, errors);
    const exists = raw.exists === undefined ? undefined : existsOf(raw.exists, `${at}:exists`, errors);
    const vars =
      raw.variables === undefined ? undefined : variables(raw.variables, `${at}:variables`, errors, []);
    const rule: Record<string, unknown> = { ...raw };
    if (changes) rule.changes = changes;
    if (exists) rule.exists = exists;
    if (vars) rule.variables = vars.values;
    if (raw.needs !== undefined) rule.needs = needs(raw.needs, `${at}:needs`, errors);
    out.push(rule);
  }
  return errors.length > before ? undefined : out;
}

function changesOf(
  value: unknown,
  location: string,
  errors: Errors,
): { paths: string[]; compare_to?: string } | undefined {
  if (arrayOfStrings(value)) return { paths: value };
  if (isPlainObject(value)) {
    if (unknownKeys(value, ['paths', 'compare_to'], location, errors)) return undefined;
    if (!arrayOfStrings(value.paths)) {
      errors.push(`${location} paths should be an array of strings`);
      return undefined;
    }
    if (value.compare_to !== undefined && typeof value.compare_to !== 'string') {
      errors.push(`${location} compare to should be a string`);
      return undefined;
    }
    return {
      paths: value.paths,
      ...(value.compare_to !== undefined ? { compare_to: value.compare_to as string } : {}),
    };
  }
  errors.push(`${location} config should be an array or a hash`);
  return undefined;
}

function existsOf(value: unknown, location: string, errors: Errors): { paths: string[] } | undefined {
  if (typeof value === 'string') return { paths: [value] };
  if (arrayOfStrings(value)) return { paths: value };
  if (isPlainObject(value) && arrayOfStrings(value.paths)) return { paths: value.paths };
  errors.push(`${location} config should be an array of strings or a hash`);
  return undefined;
}

export interface Need {
  name: string;
  artifacts: boolean;
  optional: boolean;
  pipeline?: string;
  project?: string;
  ref?: string;
  parallel?: unknown;
}

const NEED_KEYS = ['job', 'artifacts', 'optional', 'pipeline', 'project', 'ref', 'parallel'];

export function needs(value: unknown, location: string, errors: Errors): Need[] | undefined {
  const list = isPlainObject(value) ? [value] : value;
  if (!Array.isArray(list)) {
    errors.push(`${location} config can only be a hash or an array`);
    return undefined;
  }
  const out: Need[] = [];
  for (const item of list) {
    if (typeof item === 'string') {
      out.push({ name: item, artifacts: true, optional: false });
      continue;
    }
    if (!isPlainObject(item)) {
      errors.push(`${location}:need config can only be a string or a hash`);
      return undefined;
    }
    if (unknownKeys(item, NEED_KEYS, `${location}:need`, errors)) return undefined;
    if (typeof item.job !== 'string' && item.pipeline === undefined) {
      errors.push(`${location}:need job should be a string`);
      return undefined;
    }
    const need: Need = {
      name: typeof item.job === 'string' ? item.job : '',
      artifacts: item.artifacts === undefined ? true : item.artifacts === true,
      optional: item.optional === true,
    };
    if (item.pipeline !== undefined) need.pipeline = String(item.pipeline);
    if (item.project !== undefined) need.project = String(item.project);
    if (item.ref !== undefined) need.ref = String(item.ref);
    if (item.parallel !== undefined) need.parallel = item.parallel;
    out.push(need);
  }
  return out;
}

const POLICY_KEYS = ['refs', 'variables', 'changes', 'kubernetes'];

/** `only` / `except`: an array of refs, or a hash of refs, variables, changes, kubernetes. */
export function policy(
  value: unknown,
  location: string,
  errors: Errors,
): Record<string, unknown> | undefined {
  const refsOk = (refs: unknown) => arrayOfStrings(refs) && refs.every(validRef);
  if (typeof value === 'string') value = [value];
  if (Array.isArray(value)) {
    if (!refsOk(value)) {
      errors.push(`${location} config should be an array of strings or regular expressions using re2 syntax`);
      return undefined;
    }
    return { refs: value };
  }
  if (!isPlainObject(value)) {
    errors.push(`${location} config should be an array of strings or regular expressions using re2 syntax`);
    return undefined;
  }
  if (unknownKeys(value, POLICY_KEYS, location, errors)) return undefined;
  if (value.refs !== undefined && !refsOk(value.refs)) {
    errors.push(
      `${location}:refs config should be an array of strings or regular expressions using re2 syntax`,
    );
    return undefined;
  }
  if (value.variables !== undefined) {
    if (!arrayOfStrings(value.variables) || !value.variables.every(isValidExpression)) {
      errors.push(`${location} variables invalid expression syntax`);
      return undefined;
    }
  }
  if (value.changes !== undefined && !arrayOfStrings(value.changes)) {
    errors.push(`${location}:changes config should be an array of strings`);
    return undefined;
  }
  if (value.kubernetes !== undefined && value.kubernetes !== 'active') {
    errors.push(`${location} kubernetes unknown value: ${String(value.kubernetes)}`);
    return undefined;
  }
  return { ...value };
}

function validRef(ref: string): boolean {
  const m = /^(\/.+\/[ismU]*)(?:@.+)?$/s.exec(ref);
  if (!m) return !ref.startsWith('/') || !/\/[a-zA-Z]*(@.*)?$/.test(ref.slice(1));
  return isValidExpression(`"" =~ ${m[1] as string}`);
}

/** `image` (and each service): a string, or a hash with `name`. */
export function image(value: unknown, location: string, errors: Errors): Record<string, unknown> | undefined {
  if (typeof value === 'string') return { name: value };
  if (isPlainObject(value) && typeof value.name === 'string') return { ...value };
  if (isPlainObject(value)) errors.push(`${location} name can't be blank`);
  else errors.push(`${location} config should be a hash or a string`);
  return undefined;
}

export function retry(value: unknown, location: string, errors: Errors): Record<string, unknown> | undefined {
  const range = (n: unknown, what: string): boolean => {
    if (typeof n !== 'number' || !Number.isInteger(n))
      errors.push(`${location} ${what} should be an integer`);
    else if (n < 0) errors.push(`${location} ${what} must be greater than or equal to 0`);
    else if (n > 2) errors.push(`${location} ${what} must be less than or equal to 2`);
    else return true;
    return false;
  };
  if (typeof value === 'number') return range(value, 'config') ? { max: value } : undefined;
  if (!isPlainObject(value)) {
    errors.push(`${location} config has to be either an integer or a hash`);
    return undefined;
  }
  if (unknownKeys(value, ['max', 'when', 'exit_codes'], location, errors)) return undefined;
  if (value.max !== undefined && !range(value.max, 'max')) return undefined;
  return { ...value, when: value.when === undefined ? undefined : [value.when].flat() };
}

export const MAX_PARALLEL = 200;

/** `parallel: N` or `parallel: matrix`: the list of variable sets, one per job. */
export function parallel(
  value: unknown,
  location: string,
  errors: Errors,
): Array<Record<string, string>> | number | undefined {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) errors.push(`${location} config should be an integer or a hash`);
    else if (value < 1) errors.push(`${location} config must be greater than or equal to 1`);
    else if (value > MAX_PARALLEL)
      errors.push(`${location} config must be less than or equal to ${MAX_PARALLEL}`);
    else return value;
    return undefined;
  }
  if (!isPlainObject(value) || !Array.isArray(value.matrix)) {
    errors.push(`${location} config should be an integer or a hash`);
    return undefined;
  }
  const sets: Array<Record<string, string>> = [];
  for (const entry of value.matrix) {
    if (!isPlainObject(entry) || Object.keys(entry).length === 0) {
      errors.push(`${location}:matrix config should be an array of hashes`);
      return undefined;
    }
    let product: Array<Record<string, string>> = [{}];
    for (const [name, v] of Object.entries(entry)) {
      const values = Array.isArray(v) ? v : [v];
      if (!values.every((x) => typeof x === 'string' || typeof x === 'number') || values.length === 0) {
        errors.push(`${location}:matrix:variables config should be a hash of key value pairs`);
        return undefined;
      }
      product = product.flatMap((p) => values.map((x) => ({ ...p, [name]: String(x) })));
    }
    sets.push(...product);
    if (sets.length > MAX_PARALLEL) break;
  }
  if (sets.length > MAX_PARALLEL) {
    errors.push(`${location}:matrix config generates too many jobs (maximum is ${MAX_PARALLEL})`);
    return undefined;
  }
  return sets;
}

const CACHE_KEYS = ['key', 'untracked', 'paths', 'when', 'policy', 'unprotect', 'fallback_keys'];
const MAX_CACHES = 4;

/** `cache`: one hash or up to four, answered as a list with GitLab's defaults filled in. */
export function caches(
  value: unknown,
  location: string,
  errors: Errors,
): Array<Record<string, unknown>> | undefined {
  const list = Array.isArray(value) ? value : [value];
  if (list.length > MAX_CACHES) {
    errors.push(`${location} config no more than ${MAX_CACHES} caches can be created`);
    return undefined;
  }
  const out: Array<Record<string, unknown>> = [];
  for (const c of list) {
    if (!isPlainObject(c)) {
      errors.push(`${location} config should be a hash or an array of hashes`);
      return undefined;
    }
    if (unknownKeys(c, CACHE_KEYS, location, errors)) return undefined;
    if (c.when !== undefined && !['on_success', 'on_failure', 'always'].includes(String(c.when))) {
      errors.push(`${location}:when config should be one of on_success, on_failure or always`);
      return undefined;
    }
    if (
      c.policy !== undefined &&
      !['pull', 'push', 'pull-push'].includes(String(c.policy)) &&
      !String(c.policy).includes('$')
    ) {
      errors.push(`${location}:policy config should be one of: pull, push, pull-push`);
      return undefined;
    }
    if (c.paths !== undefined && !arrayOfStrings(c.paths)) {
      errors.push(`${location}:paths config should be an array of strings`);
      return undefined;
    }
    out.push({ key: 'default', untracked: false, when: 'on_success', policy: 'pull-push', paths: [], ...c });
  }
  return out;
}

const ARTIFACTS_KEYS = [
  'name',
  'untracked',
  'paths',
  'exclude',
  'expose_as',
  'when',
  'expire_in',
  'reports',
  'public',
  'access',
];

/** `artifacts`: kept as written once its keys and `when` are GitLab's. */
export function artifacts(
  value: unknown,
  location: string,
  errors: Errors,
): Record<string, unknown> | undefined {
  if (!isPlainObject(value)) {
    errors.push(`${location} config should be a hash`);
    return undefined;
  }
  if (unknownKeys(value, ARTIFACTS_KEYS, location, errors)) return undefined;
  if (value.when !== undefined && !['on_success', 'on_failure', 'always'].includes(String(value.when))) {
    errors.push(`${location} when should be on_success, on_failure or always`);
    return undefined;
  }
  if (value.paths !== undefined && !arrayOfStrings(value.paths)) {
    errors.push(`${location} paths should be an array of strings`);
    return undefined;
  }
  if (value.reports !== undefined && !isPlainObject(value.reports)) {
    errors.push(`${location}:reports config should be a hash`);
    return undefined;
  }
  if (
    value.expire_in !== undefined &&
    value.expire_in !== 'never' &&
    duration(value.expire_in, location, 'expire in', errors) === undefined
  ) {
    return undefined;
  }
  return { ...value };
}
