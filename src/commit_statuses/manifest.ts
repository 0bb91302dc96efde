import { commitStatusesAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { commitStatusesHandlers } from './commit-statuses.handlers.js';
import { CommitStatusesService } from './commit-statuses.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** Statuses posted on commits, and the statuses of a commit's jobs. */
    commitStatuses: CommitStatusesService;
  }
}

export const commitStatusesManifest = defineFamily({
  name: 'commit_statuses',
  abilities: commitStatusesAbilities,
  services: [
    defineService(
      'commitStatuses',
      ['repositories', 'protectedRefs', 'pipelines', 'projects'],
      (core, deps) => new CommitStatusesService(core, deps),
    ),
  ],
  contributes: {
    commitFields: ({ commitStatuses }) => commitStatuses.commitFields,
  },
  handlers: commitStatusesHandlers,
});
