/**
 * The `.gitlab-ci.yml` language: pure (no database, no git, no network of its own). Files and URLs
 * come in through IncludeSources; what rules read comes in through RuleContext.
 */
export { loadConfig, DEFAULT_STAGES, DEFAULT_NEEDS_LIMIT } from './load.js';
export { planPipeline } from './plan.js';
export { expandVariables } from './expand.js';
export { evaluateExpression, isValidExpression, parseExpression } from './expression.js';
export { listTemplates, readTemplate, templateSource } from './templates/index.js';
export { parseDuration } from './duration.js';
export { MAX_INCLUDES } from './include.js';
export type * from './types.js';
