/**
 * The `.gitlab-ci.yml` language: pure (no database, no git, no network of its own). Files and URLs
 * come in through IncludeSources; what rules read comes in through RuleContext.
 */
export { loadConfig, DEFAULT_STAGES } from './load.js';
export { planPipeline, DEFAULT_NEEDS_LIMIT } from './plan.js';
export { expandVariables } from './expand.js';
export { evaluateExpression, isValidExpression, parseExpression } from './expression.js';
export { listTemplates, readTemplate, templateSource } from './templates/index.js';
export { parseDuration } from './duration.js';
/** GitLab's glob semantics for `changes` and `exists`, for whoever implements RuleContext. */
export { anyPathMatches, globMatcher } from './glob.js';
export { MAX_INCLUDES } from './include.js';
export type * from './types.js';
