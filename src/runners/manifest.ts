import { defineFamily, defineService } from '../core/family.js';
import { Runners1768300000000 } from './migrations/1768300000000-runners.js';
import { Runner, RunnerNamespace, RunnerProject } from './runner.entity.js';
import { RunnersService } from './runners.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** Runners: registration, authentication (`authenticate`), and the users' runner API. */
    runners: RunnersService;
  }
}

export const runnersManifest = defineFamily({
  name: 'runners',
  entities: [Runner, RunnerProject, RunnerNamespace],
  migrations: [Runners1768300000000],
  services: [defineService('runners', [], (core) => new RunnersService(core))],
});
