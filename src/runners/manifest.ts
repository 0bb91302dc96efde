import { defineFamily, defineService } from '../core/family.js';
import { runnersAbilities } from './abilities.js';
import { Runners1768300000000 } from './migrations/1768300000000-runners.js';
import { RunnerRegistration1768300000100 } from './migrations/1768300000100-runner-registration.js';
import { Runner, RunnerNamespace, RunnerProject } from './runner.entity.js';
import { runnersHandlers } from './runners.handlers.js';
import { RunnersService } from './runners.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** Runners: registration, authentication (`authenticate`, `recordContact`), and the users' runner API. */
    runners: RunnersService;
  }
}

export const runnersManifest = defineFamily({
  name: 'runners',
  abilities: runnersAbilities,
  entities: [Runner, RunnerProject, RunnerNamespace],
  migrations: [Runners1768300000000, RunnerRegistration1768300000100],
  services: [defineService('runners', ['planLimits'], (core, deps) => new RunnersService(core, deps))],
  handlers: runnersHandlers,
});
