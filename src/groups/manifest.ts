import { groupsAbilities } from './abilities.js';
import { authorizeGroup, isGroupAbility } from '../core/abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { groupsHandlers } from './groups.handlers.js';
import { GroupsService, type GroupView } from './groups.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    groups: GroupsService;
  }
}

declare module '../core/subjects.js' {
  interface SubjectTypes {
    group: GroupView;
  }
}

export const groupsManifest = defineFamily({
  name: 'groups',
  abilities: groupsAbilities,
  services: [
    defineService(
      'groups',
      ['storage', 'namespaces'],
      (core, { storage, namespaces }) => new GroupsService(core, storage, namespaces),
    ),
  ],
  subjects: {
    group: ({ groups }) => ({
      find: (caller, id) => groups.find(caller, id),
      authorize(caller, ability, view) {
        if (!isGroupAbility(ability)) throw new Error(`unknown group ability ${ability}`);
        authorizeGroup(caller, ability, view.subject);
      },
    }),
  },
  handlers: groupsHandlers,
});
