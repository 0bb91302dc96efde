/**
 * One job's keywords checked and normalised (GitLab's Job and Bridge entries), the `default:` keys
 * it inherits, and its expansion by `parallel`.
 */
import { ONE_MONTH, ONE_WEEK } from './duration.js';
import { isPlainObject } from './parse.js';
import type { JobDefinition } from './types.js';
import * as v from './validate.js';

const PROCESSABLE_KEYS = [
  'extends',
  'stage',
  'only',
  'except',
  'rules',
  'variables',
  'inherit',
  'allow_failure',
  'when',
  'needs',
  'resource_group',
];
const JOB_KEYS = [
  ...PROCESSABLE_KEYS,
  'tags',
  'script',
  'run',
  'type',
  'image',
  'services',
  'start_in',
  'artifacts',
  'cache',
  'dependencies',
  'before_script',
  'after_script',
  'environment',
  'coverage',
  'retry',
  'parallel',
  'interruptible',
  'timeout',
  'release',
  'secrets',
  'hooks',
  'id_tokens',
  'pages',
  'publish',
  'manual_confirmation',
  'identity',
  'dast_configuration',
];
const BRIDGE_KEYS = [...PROCESSABLE_KEYS, 'trigger', 'parallel', 'environment', 'inputs'];
export const DEFAULT_KEYS = [
  'after_script',
  'artifacts',
  'before_script',
  'cache',
  'hooks',
  'id_tokens',
  'image',
  'interruptible',
  'retry',
  'services',
  'tags',
  'timeout',
];
const JOB_WHEN = ['on_success', 'on_failure', 'always', 'manual', 'delayed'];
const TRIGGER_KEYS = ['project', 'branch', 'strategy', 'forward', 'include'];

export interface BuiltJob {
  name: string;
  stage: string;
  options: Record<string, unknown>;
  trigger?: JobDefinition['trigger'];
  parallel?: number | Array<Record<string, string>>;
}

/** Is this top-level entry a job GitLab would accept (script, run or trigger)? */
export function jobKind(value: unknown): 'job' | 'bridge' | null {
  if (!isPlainObject(value)) return null;
  if ('script' in value || 'run' in value) return 'job';
  if ('trigger' in value) return 'bridge';
  return null;
}

/** Checks one job; answers it normalised, with `default:` applied, or null when it has errors. */
export function buildJob(
  name: string,
  raw: Record<string, unknown>,
  defaults: Record<string, unknown>,
  errors: v.Errors,
): BuiltJob | null {
  const at = `jobs:${name}`;
  const before = errors.length;
  const kind = jobKind(raw) as 'job' | 'bridge';
  v.unknownKeys(raw, kind === 'job' ? JOB_KEYS : BRIDGE_KEYS, at, errors);
  if (name.length > 255) errors.push(`${at} name is too long (maximum is 255 characters)`);
  if (raw.extends !== undefined && typeof raw.extends !== 'string' && !v.arrayOfStrings(raw.extends)) {
    errors.push(`${at} extends should be an array of strings or a string`);
  }
  const options: Record<string, unknown> = {};
  const copy = (key: string) => {
    if (raw[key] !== undefined) options[key] = raw[key];
  };
  [
    'release',
    'secrets',
    'id_tokens',
    'pages',
    'publish',
    'manual_confirmation',
    'identity',
    'run',
    'inputs',
  ].forEach(copy);
  if (kind === 'job' && 'script' in raw) {
    const script =
      raw.script === null || raw.script === '' ? undefined : v.commands(raw.script, `${at}:script`, errors);
    if (raw.script === null || raw.script === '' || (Array.isArray(script) && script.length === 0))
      errors.push(`${at} script can't be blank`);
    if (script) options.script = script;
  }
  for (const key of ['before_script', 'after_script']) {
    if (raw[key] !== undefined) options[key] = v.commands(raw[key], `${at}:${key}`, errors);
  }
  checkScalars(raw, at, options, errors);
  checkCollections(raw, at, options, errors);
  const stageRaw = raw.stage ?? raw.type;
  if (stageRaw !== undefined && typeof stageRaw !== 'string')
    errors.push(`${at}:stage config should be a string`);
  const stage = typeof stageRaw === 'string' ? stageRaw : 'test';
  let trigger: JobDefinition['trigger'];
  if (kind === 'bridge') trigger = triggerOf(raw.trigger, `${at}:trigger`, errors);
  let par: BuiltJob['parallel'];
  if (raw.parallel !== undefined) par = v.parallel(raw.parallel, `${at}:parallel`, errors);
  const needNames = ((options.needs as v.Need[] | undefined) ?? [])
    .filter((n) => !n.pipeline && !n.project)
    .map((n) => n.name);
  const deps = (options.dependencies as string[] | undefined) ?? [];
  const missing = deps.filter((d) => !needNames.includes(d));
  if (needNames.length > 0 && missing.length > 0)
    errors.push(`${at} dependencies the ${missing.join(', ')} should be part of needs`);
  if (errors.length > before) return null;
  applyDefaults(options, raw, defaults);
  options.stage = stage;
  return {
    name,
    stage,
    options,
    ...(trigger ? { trigger } : {}),
    ...(par !== undefined ? { parallel: par } : {}),
  };
}

function checkScalars(
  raw: Record<string, unknown>,
  at: string,
  options: Record<string, unknown>,
  errors: v.Errors,
): void {
  const hasRules = raw.rules !== undefined && raw.rules !== null;
  if (hasRules) {
    const clash = ['only', 'except', 'start_in'].filter((k) => raw[k] !== undefined && raw[k] !== null);
    if (clash.length > 0) errors.push(`${at} config key may not be used with \`rules\`: ${clash.join(', ')}`);
  }
  if (raw.when !== undefined) {
    if (!JOB_WHEN.includes(String(raw.when)))
      errors.push(`${at} when should be one of: ${JOB_WHEN.join(', ')}`);
    else options.when = raw.when;
  }
  if (raw.when === 'delayed' && !hasRules) {
    const s = v.duration(raw.start_in, at, 'start in', errors, ONE_WEEK);
    if (s) options.start_in = s;
  } else if (raw.start_in !== undefined && !hasRules) {
    errors.push(`${at} start in must be blank`);
  }
  if (raw.allow_failure !== undefined) {
    const af = raw.allow_failure;
    if (typeof af === 'boolean') options.allow_failure = af;
    else if (isPlainObject(af) && Object.keys(af).every((k) => k === 'exit_codes')) {
      const codes = [af.exit_codes].flat();
      if (!codes.every((c) => Number.isInteger(c)))
        errors.push(`${at}:allow_failure exit_codes should be an array of integers or an integer`);
      else options.allow_failure = { exit_codes: codes };
    } else errors.push(`${at} allow failure should be a hash or a boolean value`);
  }
  if (raw.interruptible !== undefined) {
    if (typeof raw.interruptible !== 'boolean')
      errors.push(`${at}:interruptible config should be a boolean value`);
    else options.interruptible = raw.interruptible;
  }
  if (raw.timeout !== undefined) {
    const t = v.duration(raw.timeout, at, 'timeout', errors, ONE_MONTH);
    if (t) options.timeout = t;
  }
  if (raw.resource_group !== undefined) {
    if (typeof raw.resource_group !== 'string') errors.push(`${at} resource group should be a string`);
    else options.resource_group = raw.resource_group;
  }
  if (raw.coverage !== undefined) {
    if (typeof raw.coverage !== 'string' || !/^\/.+\/$/s.test(raw.coverage))
      errors.push(`${at}:coverage config must be a regular expression`);
    else options.coverage = raw.coverage;
  }
  if (raw.environment !== undefined) {
    const env = raw.environment;
    if (typeof env === 'string') options.environment = { name: env };
    else if (isPlainObject(env) && typeof env.name === 'string') options.environment = { ...env };
    else errors.push(`${at}:environment config should be a hash or a string`);
  }
  if (raw.dependencies !== undefined) {
    if (!v.arrayOfStrings(raw.dependencies)) errors.push(`${at} dependencies should be an array of strings`);
    else options.dependencies = raw.dependencies;
  }
  if (raw.tags !== undefined) {
    if (!v.arrayOfStrings(raw.tags)) errors.push(`${at}:tags config should be an array of strings`);
    else options.tags = raw.tags;
  }
}

function checkCollections(
  raw: Record<string, unknown>,
  at: string,
  options: Record<string, unknown>,
  errors: v.Errors,
): void {
  if (raw.image !== undefined) options.image = v.image(raw.image, `${at}:image`, errors);
  if (raw.cache !== undefined && raw.cache !== null)
    options.cache = v.caches(raw.cache, `${at}:cache`, errors);
  if (raw.artifacts !== undefined && raw.artifacts !== null) {
    options.artifacts = v.artifacts(raw.artifacts, `${at}:artifacts`, errors);
  }
  if (raw.services !== undefined) {
    if (!Array.isArray(raw.services)) errors.push(`${at}:services config should be a array`);
    else options.services = raw.services.map((s, i) => v.image(s, `${at}:services:service`, errors) ?? i);
  }
  if (raw.retry !== undefined) options.retry = v.retry(raw.retry, `${at}:retry`, errors);
  if (raw.hooks !== undefined) {
    if (
      !isPlainObject(raw.hooks) ||
      v.unknownKeys(raw.hooks, ['pre_get_sources_script'], `${at}:hooks`, errors)
    ) {
      if (!isPlainObject(raw.hooks)) errors.push(`${at}:hooks config should be a hash`);
    } else {
      const pre = v.commands(raw.hooks.pre_get_sources_script, `${at}:hooks:pre_get_sources_script`, errors);
      options.hooks = { pre_get_sources_script: pre };
    }
  }
  if (raw.variables !== undefined) {
    const vars = v.variables(raw.variables, `${at}:variables`, errors, ['value', 'expand']);
    if (vars) options.variables = vars.values;
  }
  if (raw.rules !== undefined && raw.rules !== null) {
    options.rules = v.rules(raw.rules, `${at}:rules`, errors);
  }
  for (const key of ['only', 'except'] as const) {
    if (raw[key] !== undefined && raw[key] !== null)
      options[key] = v.policy(raw[key], `${at}:${key}`, errors);
  }
  if (raw.needs !== undefined) {
    if (raw.needs === null) options.needs = [];
    else options.needs = v.needs(raw.needs, `${at}:needs`, errors);
  }
  if (raw.inherit !== undefined) {
    const inh = raw.inherit;
    const ok = (x: unknown) => x === undefined || typeof x === 'boolean' || v.arrayOfStrings(x);
    if (!isPlainObject(inh) || v.unknownKeys(inh, ['default', 'variables'], `${at}:inherit`, errors)) {
      if (!isPlainObject(inh)) errors.push(`${at}:inherit config should be a hash`);
    } else if (!ok(inh.default) || !ok(inh.variables)) {
      errors.push(`${at}:inherit config should be a boolean value or an array of strings`);
    } else options.inherit = inh;
  }
}

function applyDefaults(
  options: Record<string, unknown>,
  raw: Record<string, unknown>,
  defaults: Record<string, unknown>,
): void {
  const inherit = isPlainObject(raw.inherit) ? raw.inherit.default : undefined;
  for (const key of DEFAULT_KEYS) {
    if (options[key] !== undefined || defaults[key] === undefined) continue;
    if (inherit === false || (Array.isArray(inherit) && !inherit.includes(key))) continue;
    options[key] = defaults[key];
  }
}

function triggerOf(value: unknown, at: string, errors: v.Errors): JobDefinition['trigger'] {
  if (typeof value === 'string') {
    if (value === '') errors.push(`${at} config can't be blank`);
    return { project: value };
  }
  if (!isPlainObject(value)) {
    errors.push(`${at} config should be a hash or a string`);
    return undefined;
  }
  if (v.unknownKeys(value, TRIGGER_KEYS, at, errors)) return undefined;
  if (value.project === undefined && value.include === undefined) {
    errors.push(`${at} config must specify either project or include`);
    return undefined;
  }
  if (value.project !== undefined && value.include !== undefined) {
    errors.push(`${at} config contains unknown keys: include`);
    return undefined;
  }
  if (value.strategy !== undefined && value.strategy !== 'depend') {
    errors.push(`${at} strategy should be depend`);
    return undefined;
  }
  const out: NonNullable<JobDefinition['trigger']> = {};
  if (value.project !== undefined) out.project = String(value.project);
  if (value.branch !== undefined) out.branch = String(value.branch);
  if (value.strategy === 'depend') out.strategy = 'depend';
  if (isPlainObject(value.forward)) {
    if (v.unknownKeys(value.forward, ['yaml_variables', 'pipeline_variables'], `${at}:forward`, errors))
      return undefined;
    out.forward = value.forward as NonNullable<typeof out.forward>;
  }
  if (value.include !== undefined) {
    const list = Array.isArray(value.include) ? value.include : [value.include];
    out.include = list.map((i) => (typeof i === 'string' ? { local: i } : i));
    if (out.include.length > 3) {
      errors.push(`${at}:include config must contain at least one and at most 3 includes`);
      return undefined;
    }
  }
  return out;
}

/** `parallel: 3` → `name 1/3`…; `parallel: matrix` → `name: [a, 1]` with the matrix values as variables. */
export function expandParallel(job: BuiltJob): JobDefinition[] {
  const base: JobDefinition = {
    name: job.name,
    stage: job.stage,
    options: job.options,
    ...(job.trigger ? { trigger: job.trigger } : {}),
  };
  if (job.parallel === undefined) return [base];
  if (typeof job.parallel === 'number') {
    const total = job.parallel;
    return Array.from({ length: total }, (_, i) => ({
      ...base,
      name: `${job.name} ${i + 1}/${total}`,
      options: { ...job.options, parallel: { total } },
      parallel: { baseName: job.name, index: i + 1, total },
    }));
  }
  const total = job.parallel.length;
  return job.parallel.map((matrix, i) => ({
    ...base,
    name: `${job.name}: [${Object.values(matrix).join(', ')}]`,
    options: {
      ...job.options,
      variables: { ...((job.options.variables as Record<string, string>) ?? {}), ...matrix },
      parallel: { total },
    },
    parallel: { baseName: job.name, index: i + 1, total, matrix },
  }));
}

/** The jobs a `needs: {job, parallel: {matrix}}` names: `job: [a, 1]` for each variable set. */
export function matrixNeedNames(base: string, parallelSpec: unknown): string[] {
  const sets = v.parallel(parallelSpec, '', []);
  if (!Array.isArray(sets)) return [];
  return sets.map((set) => `${base}: [${Object.values(set).join(', ')}]`);
}
