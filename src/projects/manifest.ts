import { projectsAbilities } from './abilities.js';
import { authorizeProject, isProjectAbility } from '../core/abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { ProjectCustomAttribute } from './custom-attribute.entity.js';
import { customAttributesHandlers } from './custom-attributes.handlers.js';
import { ProjectCustomAttributesService } from './custom-attributes.service.js';
import { ProjectCustomAttributes1767312000000 } from './migrations/1767312000000-project-custom-attributes.js';
import { Forks1767571200000 } from './migrations/1767571200000-forks.js';
import { ProjectChanges1767800500000 } from './migrations/1767800500000-project-changes.js';
import { ProjectForksService } from './project-forks.service.js';
import { ProjectListsService } from './project-lists.service.js';
import { ProjectStatistics } from './project-statistics.entity.js';
import { Project } from './project.entity.js';
import { projectsHandlers } from './projects.handlers.js';
import { projectsSubscribers } from './projects.subscribers.js';
import { ProjectsService, type ProjectView } from './projects.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** One project: finding it, its details, creating, editing, archiving and deleting it. */
    projects: ProjectsService;
    /** The project lists and a project's forks. */
    projectLists: ProjectListsService;
    /** Forking, and linking or unlinking a fork's relation. */
    projectForks: ProjectForksService;
    projectCustomAttributes: ProjectCustomAttributesService;
  }
}

declare module '../core/subjects.js' {
  interface SubjectTypes {
    project: ProjectView;
  }
}

export const projectsManifest = defineFamily({
  name: 'projects',
  abilities: projectsAbilities,
  entities: [Project, ProjectStatistics, ProjectCustomAttribute],
  migrations: [ProjectCustomAttributes1767312000000, Forks1767571200000, ProjectChanges1767800500000],
  services: [
    defineService(
      'projects',
      ['storage', 'storageRecovery'],
      (core, { storage, storageRecovery }) => new ProjectsService(core, storage, storageRecovery),
    ),
    defineService('projectLists', ['projects'], (core, deps) => new ProjectListsService(core, deps)),
    defineService(
      'projectForks',
      ['storage', 'storageRecovery', 'projects'],
      (core, { storage, storageRecovery, projects }) =>
        new ProjectForksService(core, storage, storageRecovery, { projects }),
    ),
    defineService(
      'projectCustomAttributes',
      ['projects'],
      (core, { projects }) => new ProjectCustomAttributesService(core, projects),
    ),
  ],
  subjects: {
    project: ({ projects }) => ({
      find: (caller, id) => projects.find(caller, id),
      authorize(caller, ability, view) {
        if (!isProjectAbility(ability)) throw new Error(`unknown project ability ${ability}`);
        authorizeProject(caller, ability, projects.subject(view));
      },
    }),
  },
  subscribers: projectsSubscribers,
  handlers: { ...projectsHandlers, ...customAttributesHandlers },
});
