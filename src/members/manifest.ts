import { membersAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { Member } from './member.entity.js';
import { membersHandlers } from './members.handlers.js';
import { MembersService } from './members.service.js';
import { ProjectGroupLink } from './project-group-link.entity.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    members: MembersService;
  }
}

export const membersManifest = defineFamily({
  name: 'members',
  abilities: membersAbilities,
  entities: [Member, ProjectGroupLink],
  services: [
    defineService('members', ['projects', 'memberRoles'], (core, deps) => new MembersService(core, deps)),
  ],
  handlers: membersHandlers,
});
