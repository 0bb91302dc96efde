/**
 * The dynamic half of `rules:` and `only`/`except`: which rule matches for a pipeline, and whether a
 * job's refs, variables and changes policies let it in.
 */
import { expandVariables } from './expand.js';
import { evaluateExpression } from './expression.js';
import { anyPathMatches } from './glob.js';
import type { RuleContext } from './types.js';

export type Rule = Record<string, unknown> & {
  if?: string;
  changes?: { paths: string[]; compare_to?: string };
  exists?: { paths: string[] };
  when?: string;
};

/** The first rule whose `if`, `changes` and `exists` all hold, or null. */
export async function firstMatchingRule(
  rules: Rule[],
  variables: Record<string, string>,
  ctx: RuleContext,
): Promise<Rule | null> {
  for (const rule of rules) {
    if (rule.if !== undefined && !evaluateExpression(rule.if, variables)) continue;
    if (rule.changes && !(await changesHold(rule.changes.paths, rule.changes.compare_to, variables, ctx)))
      continue;
    if (rule.exists) {
      const globs = rule.exists.paths.map((g) => expandVariables(g, variables));
      if (!(await ctx.exists(globs))) continue;
    }
    return rule;
  }
  return null;
}

async function changesHold(
  globs: string[],
  compareTo: string | undefined,
  variables: Record<string, string>,
  ctx: RuleContext,
): Promise<boolean> {
  const paths = await ctx.changedPaths(
    compareTo === undefined ? undefined : expandVariables(compareTo, variables),
  );
  if (paths === null) return true;
  return anyPathMatches(
    paths,
    globs.map((g) => expandVariables(g, variables)),
  );
}

/**
 * GitLab names a pipeline source in `only`/`except` as itself or its plural, without `_event`:
 * `pushes`, `schedules`, `merge_requests`, `external_pull_requests`, `api`, `web`, `triggers`…
 */
function sourceMatches(pattern: string, source: string): boolean {
  const name = source.replace(/_event$/, '');
  const plural = /(s|sh|ch|x)$/.test(name) ? `${name}es` : `${name}s`;
  return pattern === name || pattern === plural;
}

function refMatches(pattern: string, ctx: RuleContext): boolean {
  if (pattern === 'branches') return !ctx.tag && ctx.source !== 'merge_request_event';
  if (pattern === 'tags') return ctx.tag;
  if (sourceMatches(pattern, ctx.source)) return true;
  // `ref@group/project`: the project part is not checked here (RuleContext names no project).
  const regex = /^(\/.+\/[ismU]*)(?:@.+)?$/s.exec(pattern);
  if (regex) return evaluateExpression(`$REF =~ ${regex[1] as string}`, { REF: ctx.ref });
  return pattern.replace(/@.*$/, '') === ctx.ref;
}

/** Does one `only` / `except` policy hold? Every kind it names must hold (refs, variables, changes…). */
export async function policyHolds(
  policy: Record<string, unknown>,
  variables: Record<string, string>,
  ctx: RuleContext,
): Promise<boolean> {
  const refs = policy.refs as string[] | undefined;
  if (refs && !refs.some((r) => refMatches(r, ctx))) return false;
  const exprs = policy.variables as string[] | undefined;
  if (exprs && !exprs.some((e) => evaluateExpression(e, variables))) return false;
  const changes = policy.changes as string[] | undefined;
  if (changes && !(await changesHold(changes, undefined, variables, ctx))) return false;
  if (policy.kubernetes === 'active' && !variables.KUBECONFIG) return false;
  return true;
}

export const DEFAULT_ONLY = { refs: ['branches', 'tags'] };
