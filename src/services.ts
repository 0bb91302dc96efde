import type { DataSource } from 'typeorm';
import type { Config } from './config.js';
import { NamespacesService } from './namespaces/namespaces.service.js';
import { ProjectCustomAttributesService } from './projects/custom-attributes.service.js';
import { ProjectsService } from './projects/projects.service.js';
import { UsersService } from './users/users.service.js';

export interface ServiceDeps {
  dataSource: DataSource;
  config: Config;
}

export interface Services {
  users: UsersService;
  namespaces: NamespacesService;
  projects: ProjectsService;
  projectCustomAttributes: ProjectCustomAttributesService;
}

export function createServices(deps: ServiceDeps): Services {
  const projects = new ProjectsService(deps);
  return {
    users: new UsersService(deps),
    namespaces: new NamespacesService(deps),
    projects,
    projectCustomAttributes: new ProjectCustomAttributesService(deps, projects),
  };
}
