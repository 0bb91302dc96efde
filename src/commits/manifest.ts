import { defineFamily, defineService } from '../core/family.js';
import { commitsHandlers } from './commits.handlers.js';
import { CommitsService } from './commits.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    commits: CommitsService;
  }
}

export const commitsManifest = defineFamily({
  name: 'commits',
  services: [
    defineService(
      'commits',
      ['projects', 'repositories', 'protectedRefs'],
      (core, deps) => new CommitsService(deps, core),
    ),
  ],
  handlers: commitsHandlers,
});
