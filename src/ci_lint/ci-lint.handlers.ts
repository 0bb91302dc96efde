import type { components } from '../../generated/openapi.js';
import { badParameter } from '../core/errors.js';
import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import type { LintResult } from './lint-result.js';

type LegacyJson = components['schemas']['CiLintLegacyResult'];
type ResultJson = components['schemas']['CiLintResult'];

function present(result: LintResult, includeJobs: boolean | undefined): ResultJson {
  return {
    valid: result.valid,
    errors: result.errors,
    warnings: result.warnings,
    merged_yaml: result.mergedYaml,
    includes: result.includes,
    ...(includeJobs ? { jobs: result.jobs } : {}),
  };
}

/** Grape's `mutually_exclusive`: a deprecated name and its successor together are refused. */
function either(deprecated: [string, string | undefined], successor: [string, string | undefined]) {
  if (deprecated[1] !== undefined && successor[1] !== undefined)
    throw badParameter(`${deprecated[0]}, ${successor[0]} are mutually exclusive`);
  return successor[1] ?? deprecated[1];
}

export const ciLintHandlers = defineHandlers(['ciLint'], {
  async lintProjectCiConfig({ params, subject, caller, services }) {
    const result = await services.ciLint.project.lintFile(caller, subject, {
      contentRef: either(['sha', params.sha], ['content_ref', params.content_ref]),
      dryRunRef: either(['ref', params.ref], ['dry_run_ref', params.dry_run_ref]),
      dryRun: params.dry_run ?? false,
    });
    return { status: 200, body: present(result, params.include_jobs) };
  },

  async lintCiConfigInProject({ body, subject, caller, services }) {
    const result = await services.ciLint.project.lint(caller, subject, body.content, {
      dryRun: body.dry_run ?? false,
      ref: body.ref,
    });
    return { status: 200, body: present(result, body.include_jobs) };
  },

  /** GitLab 15.x's shape: `status` instead of `valid`; merged YAML and jobs only on request. */
  async lintCiConfig({ body, services }) {
    const result = await services.ciLint.lintWithoutProject(body.content);
    const legacy: LegacyJson = {
      status: result.valid ? 'valid' : 'invalid',
      errors: result.errors,
      warnings: result.warnings,
      ...(body.include_merged_yaml ? { merged_yaml: result.mergedYaml } : {}),
      ...(body.include_jobs ? { jobs: result.jobs } : {}),
    };
    return { status: 200, body: legacy };
  },

  async listCiYmlTemplates({ params, services, request }) {
    return pagedResponse(services.ciLint.templates(params, request), (template) => template);
  },

  async getCiYmlTemplate({ params, services }) {
    return { status: 200, body: services.ciLint.template(params.key) };
  },
});
