import { defineFamily, defineService } from '../core/family.js';
import { branchesHandlers } from './branches.handlers.js';
import { BranchesService } from './branches.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    branches: BranchesService;
  }
}

export const branchesManifest = defineFamily({
  name: 'branches',
  services: [
    defineService(
      'branches',
      ['projects', 'repositories', 'protectedRefs'],
      (core, deps) => new BranchesService(core, deps),
    ),
  ],
  handlers: branchesHandlers,
});
