import { memberRolesAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { MemberRoles1767745200000 } from './migrations/1767745200000-member-roles.js';
import { MemberRole } from './member-role.entity.js';
import { memberRolesHandlers } from './member-roles.handlers.js';
import { MemberRolesService } from './member-roles.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    memberRoles: MemberRolesService;
  }
}

export const memberRolesManifest = defineFamily({
  name: 'member_roles',
  abilities: memberRolesAbilities,
  entities: [MemberRole],
  migrations: [MemberRoles1767745200000],
  services: [defineService('memberRoles', [], (core) => new MemberRolesService(core))],
  handlers: memberRolesHandlers,
});
