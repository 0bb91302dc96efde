import { defineFamily, defineService } from '../core/family.js';
import { ciLintHandlers } from './ci-lint.handlers.js';
import { CiLintService } from './ci-lint.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    ciLint: CiLintService;
  }
}

/** CI lint and the CI templates: no table of their own; they stand on the configuration language. */
export const ciLintManifest = defineFamily({
  name: 'ci_lint',
  services: [
    defineService(
      'ciLint',
      ['projects', 'repositories', 'protectedRefs', 'ciVariables', 'planLimits'],
      (core, deps) => new CiLintService(core, deps),
    ),
  ],
  handlers: ciLintHandlers,
});
