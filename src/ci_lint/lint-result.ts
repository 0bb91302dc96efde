/** What a lint answers, whichever way it checked. */
import type { IncludeRecord, LoadedConfig } from '../ci_config/index.js';
import type { LintJobJson } from './lint-jobs.js';

export interface LintResult {
  valid: boolean;
  errors: string[];
  warnings: string[];
  mergedYaml: string | null;
  includes: IncludeRecord[];
  jobs: LintJobJson[];
}

/** A lint result from a loaded configuration, with errors found after loading (planning) added. */
export function lintResult(
  config: LoadedConfig,
  jobs: LintJobJson[],
  extraErrors: string[] = [],
): LintResult {
  const errors = [...config.errors, ...extraErrors];
  return {
    valid: errors.length === 0,
    errors,
    warnings: config.warnings,
    mergedYaml: config.mergedYaml || null,
    includes: config.includes,
    jobs,
  };
}
