import { protectedBranchesAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { ProtectedBranch, ProtectedBranchAccessLevel } from './protected-branch.entity.js';
import { protectedBranchesHandlers } from './protected-branches.handlers.js';
import { ProtectedBranchesService } from './protected-branches.service.js';
import { ProtectedRefs } from './protected-refs.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    protectedBranches: ProtectedBranchesService;
    /** Which ref updates a caller may make: protected branches and tags, for pushes and API writes alike. */
    protectedRefs: ProtectedRefs;
  }
}

export const protectedBranchesManifest = defineFamily({
  name: 'protected_branches',
  abilities: protectedBranchesAbilities,
  entities: [ProtectedBranch, ProtectedBranchAccessLevel],
  services: [
    defineService(
      'protectedBranches',
      ['repositories', 'protectedRefs'],
      (core, deps) => new ProtectedBranchesService(core, deps),
    ),
    defineService('protectedRefs', [], (core) => new ProtectedRefs(core.dataSource)),
  ],
  contributes: {
    preReceiveChecks: ({ protectedRefs }) => protectedRefs.preReceiveCheck(),
  },
  handlers: protectedBranchesHandlers,
});
