import type { components } from '../../generated/openapi.js';
import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';

type LegacyJson = components['schemas']['CiLintLegacyResult'];

export const ciLintHandlers = defineHandlers(['ciLint'], {
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
