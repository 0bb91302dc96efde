import { protectedBranchesAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { ProtectedBranch, ProtectedBranchAccessLevel } from './protected-branch.entity.js';
import { protectedBranchesHandlers } from './protected-branches.handlers.js';
import { ProtectedBranchesService } from './protected-branches.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    protectedBranches: ProtectedBranchesService;
  }
}

export const protectedBranchesManifest = defineFamily({
  name: 'protected_branches',
  abilities: protectedBranchesAbilities,
  entities: [ProtectedBranch, ProtectedBranchAccessLevel],
  services: [
    defineService(
      'protectedBranches',
      ['repositories'],
      (core, deps) => new ProtectedBranchesService(core, deps),
    ),
  ],
  handlers: protectedBranchesHandlers,
});
