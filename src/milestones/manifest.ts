import { milestonesAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { Milestone } from './milestone.entity.js';
import { milestonesHandlers } from './milestones.handlers.js';
import { Milestones1767528060000 } from './migrations/1767528060000-milestones.js';
import { MilestonesService } from './milestones.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    milestones: MilestonesService;
  }
}

export const milestonesManifest = defineFamily({
  name: 'milestones',
  abilities: milestonesAbilities,
  entities: [Milestone],
  migrations: [Milestones1767528060000],
  services: [defineService('milestones', [], (core) => new MilestonesService(core))],
  handlers: milestonesHandlers,
});
