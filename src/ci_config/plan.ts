/**
 * planPipeline: the dynamic half. `workflow:rules` (and its name), each job's rules or only/except,
 * when / allow_failure / needs / variables as the matching rule says, empty stages removed, and the
 * needs that point at a job the pipeline lost reported with GitLab's message.
 */
import { expandVariables } from './expand.js';
import { matrixNeedNames } from './jobs.js';
import { DEFAULT_ONLY, firstMatchingRule, policyHolds, type Rule } from './rules.js';
import type { JobDefinition, LoadedConfig, PlannedJob, PlanResult, RuleContext } from './types.js';
import type { Need } from './validate.js';

/** GitLab's default `ci_needs_size_limit`. */
export const DEFAULT_NEEDS_LIMIT = 50;

type When = PlannedJob['when'];

export async function planPipeline(config: LoadedConfig, ctx: RuleContext): Promise<PlanResult> {
  if (config.errors.length > 0) return { ok: false, skipped: false, errors: config.errors };
  const pipelineVars: Record<string, string> = { ...config.variables, ...ctx.variables };
  const wfRules = config.workflow.rules as Rule[] | undefined;
  const ruleVars: Record<string, string> = {};
  let autoCancel = config.workflow.autoCancel;
  if (wfRules) {
    const rule = await firstMatchingRule(wfRules, pipelineVars, ctx);
    if (!rule || rule.when === 'never')
      return { ok: false, skipped: true, reason: 'Pipeline filtered out by workflow rules.' };
    Object.assign(ruleVars, (rule.variables as Record<string, string>) ?? {});
    if (rule.auto_cancel && typeof rule.auto_cancel === 'object')
      autoCancel = { ...autoCancel, ...rule.auto_cancel };
  }
  // Variables a workflow rule sets override the YAML's globals, not the pipeline's own (GitLab's order).
  const yamlVars = { ...config.variables, ...ruleVars };
  const allVars = { ...yamlVars, ...ctx.variables };
  const name =
    config.workflow.name === undefined
      ? null
      : expandVariables(config.workflow.name, allVars).slice(0, 255) || null;
  const planned: PlannedJob[] = [];
  for (const job of config.jobs) {
    const p = await planJob(job, config, yamlVars, ctx, Boolean(wfRules));
    if (p) planned.push(p);
  }
  const errors = resolveNeeds(planned, config.jobs, ctx.needsLimit ?? DEFAULT_NEEDS_LIMIT);
  if (errors.length > 0) return { ok: false, skipped: false, errors };
  // A pipeline of nothing but `.pre` / `.post` jobs does not run either (GitLab's documented rule).
  if (planned.every((j) => j.stage === '.pre' || j.stage === '.post')) {
    return {
      ok: false,
      skipped: true,
      reason:
        'Pipeline will not run for the selected trigger. The rules configuration prevented any jobs from being added to the pipeline.',
    };
  }
  const used = new Set(planned.map((j) => j.stage));
  const stages = config.stages.filter((s) => used.has(s));
  return {
    ok: true,
    name,
    variables: ruleVars,
    stages,
    jobs: planned,
    warnings: [...config.warnings],
    ...(autoCancel ? { autoCancel } : {}),
  };
}

function inheritedGlobals(job: JobDefinition, yamlVars: Record<string, string>): Record<string, string> {
  const inherit = (job.options.inherit as { variables?: boolean | string[] } | undefined)?.variables;
  if (inherit === false) return {};
  if (Array.isArray(inherit))
    return Object.fromEntries(Object.entries(yamlVars).filter(([k]) => inherit.includes(k)));
  return yamlVars;
}

async function planJob(
  job: JobDefinition,
  config: LoadedConfig,
  yamlVars: Record<string, string>,
  ctx: RuleContext,
  hasWorkflowRules: boolean,
): Promise<PlannedJob | null> {
  const o = job.options;
  const jobVars: Record<string, string> = { ...((o.variables as Record<string, string>) ?? {}) };
  const visible = () => ({
    ...inheritedGlobals(job, yamlVars),
    ...jobVars,
    ...ctx.variables,
    ...predefinedFor(job),
  });
  let when: string = (o.when as string) ?? 'on_success';
  let startIn = o.start_in as string | undefined;
  const staticFailure = o.allow_failure as boolean | { exit_codes: number[] } | undefined;
  let ruleAllowFailure: boolean | undefined;
  let needs = o.needs as Need[] | undefined;
  let interruptible = o.interruptible as boolean | undefined;
  const rules = o.rules as Rule[] | undefined;
  if (rules) {
    const rule = await firstMatchingRule(rules, visible(), ctx);
    if (!rule || rule.when === 'never') return null;
    if (rule.when !== undefined) when = rule.when;
    if (rule.start_in !== undefined) startIn = String(rule.start_in);
    if (rule.allow_failure !== undefined) ruleAllowFailure = rule.allow_failure as boolean;
    if (rule.needs !== undefined) needs = rule.needs as Need[];
    if (rule.interruptible !== undefined) interruptible = rule.interruptible as boolean;
    Object.assign(jobVars, (rule.variables as Record<string, string>) ?? {});
  } else {
    const only =
      (o.only as Record<string, unknown> | undefined) ?? (hasWorkflowRules ? undefined : DEFAULT_ONLY);
    if (only && !(await policyHolds(only, visible(), ctx))) return null;
    const except = o.except as Record<string, unknown> | undefined;
    if (except && (await policyHolds(except, visible(), ctx))) return null;
  }
  if (when === 'never') return null;
  // GitLab decides allow_failure statically from the job (`allow_failure`, else a job-level
  // `when: manual`), and a matching rule's `allow_failure` overrides it; `rules: when: manual` alone
  // leaves it false, as GitLab documents.
  const exitCodes =
    ruleAllowFailure === undefined && typeof staticFailure === 'object'
      ? staticFailure.exit_codes
      : undefined;
  const staticAllow =
    typeof staticFailure === 'boolean' ? staticFailure : staticFailure ? false : o.when === 'manual';
  const allow = ruleAllowFailure ?? staticAllow;
  const planned: PlannedJob = {
    name: job.name,
    stage: job.stage,
    stageIndex: config.stages.indexOf(job.stage),
    when: when as When,
    allowFailure: allow,
    needs: needs === undefined ? null : needs.map((n) => ({ ...n })),
    variables: jobVars,
    yamlVariables: { ...inheritedGlobals(job, yamlVars), ...jobVars },
    options: o,
    interruptible: interruptible === true,
  };
  if (when === 'delayed' && startIn !== undefined) planned.startIn = startIn;
  if (exitCodes) planned.allowFailureExitCodes = exitCodes;
  if (job.trigger) planned.trigger = job.trigger;
  if (typeof o.resource_group === 'string')
    planned.resourceGroup = expandVariables(o.resource_group, visible());
  return planned;
}

/** Predefined variables that depend on the job itself. */
function predefinedFor(job: JobDefinition): Record<string, string> {
  const out: Record<string, string> = { CI_JOB_NAME: job.name, CI_JOB_STAGE: job.stage };
  if (job.parallel) {
    out.CI_NODE_INDEX = String(job.parallel.index);
    out.CI_NODE_TOTAL = String(job.parallel.total);
    out.CI_JOB_NAME_SLUG = job.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 63);
  }
  return out;
}

/**
 * Needs name jobs as written (a parallel job by its base name: every one of its jobs is needed).
 * A need whose job the pipeline lost is an error unless it is optional.
 */
function resolveNeeds(planned: PlannedJob[], all: JobDefinition[], limit: number): string[] {
  const present = new Set(planned.map((j) => j.name));
  const byBase = new Map<string, string[]>();
  for (const j of all) {
    const base = j.parallel?.baseName ?? j.name;
    byBase.set(base, [...(byBase.get(base) ?? []), j.name]);
  }
  const errors: string[] = [];
  for (const job of planned) {
    if (!job.needs) continue;
    const out: NonNullable<PlannedJob['needs']> = [];
    for (const need of job.needs) {
      if (need.pipeline !== undefined || need.project !== undefined) {
        out.push(need);
        continue;
      }
      const wanted =
        need.parallel !== undefined ? matrixNeedNames(need.name, need.parallel) : byBase.get(need.name);
      const names = (wanted ?? [need.name]).filter((n) => present.has(n));
      if (names.length === 0) {
        if (need.optional) continue;
        errors.push(
          `'${job.name}' job needs '${need.name}' job, but '${need.name}' does not exist in the pipeline. This might be because of the only, except, or rules keywords. To need a job that sometimes does not exist in the pipeline, use needs:optional.`,
        );
        continue;
      }
      for (const n of names) out.push({ ...need, name: n });
    }
    if (out.length > limit) {
      errors.push(
        `${job.name}: one job can only need ${limit} others, but you have listed ${out.length}. See needs keyword documentation for more details`,
      );
    }
    job.needs = out;
  }
  return errors;
}
