/**
 * loadConfig: the static half. Parse, includes, extends, !reference, then every keyword checked with
 * GitLab's messages; entry errors first, then (when there are none) the checks across jobs that
 * GitLab's YAML processor makes: stages, needs, dependencies.
 */
import { resolveExtends, resolveReferences } from './extends.js';
import { ConfigError, loadFile, type IncludeState } from './include.js';
import { buildJob, DEFAULT_KEYS, expandParallel, jobKind, matrixNeedNames, type BuiltJob } from './jobs.js';
import { isPlainObject, toYaml } from './parse.js';
import type { JobDefinition, LoadedConfig, LoadInput } from './types.js';
import * as v from './validate.js';
import { ONE_MONTH } from './duration.js';

export const DEFAULT_STAGES = ['build', 'test', 'deploy'];
const GLOBAL_KEYS = [
  'default',
  'include',
  'before_script',
  'image',
  'services',
  'after_script',
  'variables',
  'stages',
  'types',
  'cache',
  'workflow',
];
const WORKFLOW_RULE_KEYS = ['if', 'changes', 'exists', 'when', 'variables', 'auto_cancel'];

function empty(errors: string[], extra: Partial<LoadedConfig> = {}): LoadedConfig {
  return {
    errors,
    warnings: [],
    mergedYaml: '',
    includes: [],
    stages: [],
    jobs: [],
    workflow: {},
    variables: {},
    variableOptions: {},
    ...extra,
  };
}

export async function loadConfig(input: LoadInput): Promise<LoadedConfig> {
  const state: IncludeState = {
    sources: input.sources,
    variables: input.variables ?? {},
    ...(input.exists ? { exists: input.exists } : {}),
    records: [],
    count: 0,
    root: { project: input.projectPath, sha: input.sha, own: true },
  };
  let config: Record<string, unknown>;
  try {
    if (input.content.trim() === '') return empty(['Please provide content of .gitlab-ci.yml']);
    config = await loadFile(input.content, input.inputs, state.root, state, 0, null);
    config = resolveReferences(resolveExtends(config));
  } catch (err) {
    if (err instanceof ConfigError) return empty([err.message], { includes: state.records });
    throw err;
  }
  const errors: string[] = [];
  const warnings: string[] = [];
  const stages = stagesOf(config, errors);
  const vars = v.variables(config.variables, 'variables', errors, [
    'value',
    'description',
    'options',
    'expand',
  ]);
  const defaults = defaultsOf(config, errors);
  const workflow = workflowOf(config.workflow, errors);
  const built: BuiltJob[] = [];
  let visible = 0;
  for (const [name, value] of Object.entries(config)) {
    if (GLOBAL_KEYS.includes(name) || name.startsWith('.')) continue;
    visible++;
    if (!jobKind(value)) {
      errors.push(`jobs ${name} config should implement the script:, run:, or trigger: keyword`);
      continue;
    }
    const job = buildJob(name, value as Record<string, unknown>, defaults, errors);
    if (job) built.push(job);
    if (job && !workflow.rules) warnAboutRules(job, warnings);
  }
  if (visible === 0) errors.push('jobs config should contain at least one visible job');
  const result = {
    errors,
    warnings,
    mergedYaml: '',
    includes: state.records,
    stages,
    workflow,
    variables: vars?.values ?? {},
    variableOptions: variableOptions(vars?.data ?? {}, vars?.values ?? {}),
  };
  if (errors.length === 0) crossJobChecks(built, stages, errors);
  const jobs: JobDefinition[] = errors.length > 0 ? [] : built.flatMap(expandParallel);
  return withLazyYaml({ ...result, jobs }, config);
}

/** Writing the merged YAML costs more than the checks: only lint reads it, so it is made when read. */
function withLazyYaml(loaded: LoadedConfig, config: Record<string, unknown>): LoadedConfig {
  let text: string | undefined;
  Object.defineProperty(loaded, 'mergedYaml', {
    enumerable: true,
    configurable: true,
    get: () => (text ??= toYaml(config)),
    set: (value: string) => {
      text = value;
    },
  });
  return loaded;
}

function stagesOf(config: Record<string, unknown>, errors: string[]): string[] {
  const raw = config.stages ?? config.types;
  if (raw !== undefined && !v.arrayOfStrings(raw)) {
    errors.push('stages config should be an array of strings');
    return ['.pre', ...DEFAULT_STAGES, '.post'];
  }
  const list = ((raw as string[] | undefined) ?? DEFAULT_STAGES).filter((s) => s !== '.pre' && s !== '.post');
  return ['.pre', ...new Set(list), '.post'];
}

/** `default:` plus the deprecated top-level image, services, scripts and cache. */
function defaultsOf(config: Record<string, unknown>, errors: string[]): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const key of ['image', 'services', 'before_script', 'after_script', 'cache']) {
    if (config[key] !== undefined) raw[key] = config[key];
  }
  if (config.default !== undefined && config.default !== null) {
    if (!isPlainObject(config.default)) errors.push('default config should be a hash');
    else {
      v.unknownKeys(config.default, DEFAULT_KEYS, 'default', errors);
      Object.assign(raw, config.default);
    }
  }
  const out: Record<string, unknown> = { ...raw };
  for (const key of ['before_script', 'after_script']) {
    if (raw[key] !== undefined) out[key] = v.commands(raw[key], `default:${key}`, errors);
  }
  if (raw.image !== undefined) out.image = v.image(raw.image, 'default:image', errors);
  if (raw.services !== undefined) {
    if (!Array.isArray(raw.services)) errors.push('default:services config should be a array');
    else out.services = raw.services.map((s) => v.image(s, 'default:services:service', errors));
  }
  if (raw.retry !== undefined) out.retry = v.retry(raw.retry, 'default:retry', errors);
  if (raw.cache !== undefined && raw.cache !== null) out.cache = v.caches(raw.cache, 'default:cache', errors);
  if (raw.artifacts !== undefined && raw.artifacts !== null) {
    out.artifacts = v.artifacts(raw.artifacts, 'default:artifacts', errors);
  }
  if (raw.tags !== undefined && !v.arrayOfStrings(raw.tags))
    errors.push('default:tags config should be an array of strings');
  if (raw.interruptible !== undefined && typeof raw.interruptible !== 'boolean')
    errors.push('default:interruptible config should be a boolean value');
  if (raw.timeout !== undefined) v.duration(raw.timeout, 'default', 'timeout', errors, ONE_MONTH);
  if (raw.hooks !== undefined) {
    if (!isPlainObject(raw.hooks)) errors.push('default:hooks config should be a hash');
    else
      out.hooks = {
        pre_get_sources_script: v.commands(
          raw.hooks.pre_get_sources_script,
          'default:hooks:pre_get_sources_script',
          errors,
        ),
      };
  }
  return out;
}

function workflowOf(raw: unknown, errors: string[]): LoadedConfig['workflow'] {
  if (raw === undefined || raw === null) return {};
  if (!isPlainObject(raw)) {
    errors.push('workflow config should be a hash');
    return {};
  }
  v.unknownKeys(raw, ['rules', 'name', 'auto_cancel'], 'workflow', errors);
  const out: LoadedConfig['workflow'] = {};
  if (raw.rules !== undefined && raw.rules !== null) {
    const rules = v.rules(raw.rules, 'workflow:rules', errors, {
      keys: WORKFLOW_RULE_KEYS,
      when: ['always', 'never'],
    });
    if (rules) out.rules = rules;
  }
  if (raw.name !== undefined) {
    if (typeof raw.name !== 'string') errors.push('workflow name should be a string');
    else if (raw.name.length > 255) errors.push('workflow name is too long (maximum is 255 characters)');
    else out.name = raw.name;
  }
  if (raw.auto_cancel !== undefined) {
    if (!isPlainObject(raw.auto_cancel)) errors.push('workflow:auto_cancel config should be a hash');
    else {
      const ac = raw.auto_cancel;
      v.unknownKeys(ac, ['on_new_commit', 'on_job_failure'], 'workflow:auto_cancel', errors);
      if (
        ac.on_new_commit !== undefined &&
        !['conservative', 'interruptible', 'none'].includes(String(ac.on_new_commit))
      ) {
        errors.push('workflow:auto_cancel on new commit must be one of: conservative, interruptible, none');
      }
      if (ac.on_job_failure !== undefined && !['none', 'all'].includes(String(ac.on_job_failure))) {
        errors.push('workflow:auto_cancel on job failure must be one of: none, all');
      }
      out.autoCancel = ac;
    }
  }
  return out;
}

function variableOptions(
  data: Record<string, Record<string, unknown>>,
  values: Record<string, string>,
): LoadedConfig['variableOptions'] {
  const out: LoadedConfig['variableOptions'] = {};
  for (const [key, d] of Object.entries(data)) {
    out[key] = { value: values[key] ?? '' };
    if (typeof d.description === 'string') out[key].description = d.description;
    if (Array.isArray(d.options)) out[key].options = d.options.map(String);
  }
  return out;
}

function warnAboutRules(job: BuiltJob, warnings: string[]): void {
  const rules = job.options.rules as Array<Record<string, unknown>> | undefined;
  const last = rules?.[rules.length - 1];
  if (last && Object.keys(last).length === 1 && last.when !== undefined && last.when !== 'never') {
    warnings.push(
      `jobs:${job.name} may allow multiple pipelines to run for a single action due to \`rules:when\` clause with no \`workflow:rules\` - read more: https://docs.gitlab.com/ee/ci/troubleshooting.html#pipeline-warnings`,
    );
  }
}

/** The first failure of GitLab's YAML processor, which stops at its first error. */
class Stop extends Error {}

/**
 * GitLab's YAML processor, job by job: the chosen stage exists; dependencies, needs (the job's and
 * its rules') and a child pipeline's artifact job name jobs of the same or an earlier stage; needs
 * are not duplicated; an environment's on_stop job stops it; and needs make no cycle.
 */
function crossJobChecks(jobs: BuiltJob[], stages: string[], errors: string[]): void {
  try {
    const byName = new Map(jobs.map((j) => [j.name, j]));
    for (const job of jobs) checkJob(job, byName, stages);
    checkCycles(jobs);
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    errors.push(err.message);
  }
}

function checkJob(job: BuiltJob, byName: Map<string, BuiltJob>, stages: string[]): void {
  const name = job.name;
  if (!stages.includes(job.stage))
    throw new Stop(
      `${name} job: chosen stage ${job.stage} does not exist; available stages are ${stages.join(', ')}`,
    );
  const dependency = (dep: string, type: 'dependency' | 'need', optional = false) => {
    const other = byName.get(dep);
    if (!other) {
      if (optional) return;
      throw new Stop(`${name} job: undefined ${type}: ${dep}`);
    }
    const at = stages.indexOf(other.stage);
    if (at < 0 || at > stages.indexOf(job.stage))
      throw new Stop(`${name} job: ${type} ${dep} is not defined in current or prior stages`);
  };
  for (const dep of (job.options.dependencies as string[] | undefined) ?? []) dependency(dep, 'dependency');
  const needLists = [
    job.options.needs,
    ...((job.options.rules as Array<Record<string, unknown>> | undefined) ?? []).map((r) => r.needs),
  ];
  for (const list of needLists) {
    const needs = ((list as v.Need[] | undefined) ?? []).filter(
      (n) => n.pipeline === undefined && n.project === undefined,
    );
    for (const need of needs) {
      dependency(need.name, 'need', need.optional);
      const other = byName.get(need.name);
      if (need.parallel === undefined || !other) continue;
      const exist = new Set(expandParallel(other).map((j) => j.name));
      const names = matrixNeedNames(need.name, need.parallel);
      const missing = names.find((n) => !exist.has(n));
      if (names.length === 0)
        throw new Stop(`jobs:${name}:needs:need:parallel config should be an integer or a hash`);
      if (missing && !need.optional) throw new Stop(`${name} job: undefined need: ${missing}`);
    }
    const names = needs.map((n) => n.name);
    const dup = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
    if (dup.length > 0) throw new Stop(`${name} has the following needs duplicated: ${dup.join(', ')}.`);
  }
  for (const inc of job.trigger?.include ?? []) {
    if (isPlainObject(inc) && typeof inc.job === 'string') dependency(inc.job, 'dependency');
  }
  const env = job.options.environment as Record<string, unknown> | undefined;
  if (env && typeof env.on_stop === 'string') {
    const stop = byName.get(env.on_stop);
    const stopEnv = stop?.options.environment as Record<string, unknown> | undefined;
    if (!stop) throw new Stop(`${name} job: on_stop job ${env.on_stop} is not defined`);
    if (!stopEnv) throw new Stop(`${name} job: on_stop job ${env.on_stop} does not have environment defined`);
    if (stopEnv.name !== env.name)
      throw new Stop(`${name} job: on_stop job ${env.on_stop} have different environment name`);
    if (stopEnv.action !== 'stop')
      throw new Stop(`${name} job: on_stop job ${env.on_stop} needs to have action stop defined`);
  }
}

function checkCycles(jobs: BuiltJob[]): void {
  const edges = new Map(
    jobs.map((j) => [j.name, ((j.options.needs as v.Need[] | undefined) ?? []).map((n) => n.name)]),
  );
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string): void => {
    const s = state.get(name);
    if (s === 'done') return;
    if (s === 'visiting') throw new Stop('The pipeline has circular dependencies');
    state.set(name, 'visiting');
    for (const next of edges.get(name) ?? []) if (edges.has(next)) visit(next);
    state.set(name, 'done');
  };
  for (const name of edges.keys()) visit(name);
}
