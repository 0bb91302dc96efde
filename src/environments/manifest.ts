import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { environmentsAbilities } from './abilities.js';
import { Deployment, Environment } from './environment.entity.js';
import { environmentsHandlers } from './environments.handlers.js';
import { EnvironmentsService } from './environments.service.js';
import { Environments1768300300000 } from './migrations/1768300300000-environments.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** Environments, their deployments (`environments.deployments`) and the jobs' side (`tracking`). */
    environments: EnvironmentsService;
  }
}

export const environmentsManifest = defineFamily({
  name: 'environments',
  abilities: environmentsAbilities,
  entities: [Environment, Deployment],
  migrations: [Environments1768300300000],
  services: [
    defineService(
      'environments',
      ['projects', 'pipelines'],
      (core, deps) => new EnvironmentsService(core, deps),
    ),
  ],
  contributes: {
    ciJobChanges: ({ environments }) => environments.tracking,
  },
  subscribers: ({ environments }) => [
    // `auto_stop_in` of a successful deployment: the environment is stopped when its time comes.
    defineSubscriber({
      event: 'environments.auto_stop_due',
      name: 'environments.auto_stop',
      handle: ({ environmentId }) => environments.autoStop(environmentId),
    }),
    // Review apps scheduled for deletion go when their week has passed.
    defineSubscriber({
      event: 'environments.auto_delete_due',
      name: 'environments.auto_delete',
      handle: ({ environmentId }) => environments.autoDelete(environmentId),
    }),
  ],
  handlers: environmentsHandlers,
});
