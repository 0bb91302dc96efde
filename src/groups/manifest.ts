import { defineFamily, defineService } from '../core/family.js';
import { groupsHandlers } from './groups.handlers.js';
import { GroupsService } from './groups.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    groups: GroupsService;
  }
}

export const groupsManifest = defineFamily({
  name: 'groups',
  services: [
    defineService(
      'groups',
      ['storage', 'namespaces'],
      (core, { storage, namespaces }) => new GroupsService(core, storage, namespaces),
    ),
  ],
  handlers: groupsHandlers,
});
