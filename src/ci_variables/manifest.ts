import { defineFamily, defineService } from '../core/family.js';
import { ciVariablesAbilities } from './abilities.js';
import { CiVariable } from './ci-variable.entity.js';
import { ciVariablesHandlers } from './ci-variables.handlers.js';
import { CiVariablesService } from './ci-variables.service.js';
import { CiVariables1767901100000 } from './migrations/1767901100000-ci-variables.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** CI/CD variables; `forPipeline` gives the pipelines what their jobs receive. */
    ciVariables: CiVariablesService;
  }
}

export const ciVariablesManifest = defineFamily({
  name: 'ci_variables',
  abilities: ciVariablesAbilities,
  entities: [CiVariable],
  migrations: [CiVariables1767901100000],
  services: [
    defineService('ciVariables', ['planLimits'], (core, deps) => new CiVariablesService(core, deps)),
  ],
  handlers: ciVariablesHandlers,
});
