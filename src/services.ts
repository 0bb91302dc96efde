import type { DataSource } from 'typeorm';
import type { Config } from './config.js';
import { AccessTokensService } from './access_tokens/access-tokens.service.js';
import { RateLimiter } from './core/rate-limit.js';
import { RepositoriesService } from './git/repositories.service.js';
import { RepositoryStorage } from './git/storage.js';
import { GroupsService } from './groups/groups.service.js';
import { MembersService } from './members/members.service.js';
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
  groups: GroupsService;
  members: MembersService;
  accessTokens: AccessTokensService;
  projects: ProjectsService;
  projectCustomAttributes: ProjectCustomAttributesService;
  /** Shared by the API's endpoint classes and the services' own limits (archives, large blobs). */
  rateLimiter: RateLimiter;
  storage: RepositoryStorage;
  repositories: RepositoriesService;
}

export function createServices(deps: ServiceDeps): Services {
  const users = new UsersService(deps);
  const storage = new RepositoryStorage(deps.config.storages);
  const projects = new ProjectsService(deps, storage);
  const groups = new GroupsService(deps, storage);
  return {
    users,
    namespaces: new NamespacesService(deps),
    groups,
    members: new MembersService(deps, { projects, groups }),
    accessTokens: new AccessTokensService(deps, { projects, groups, users }),
    projects,
    projectCustomAttributes: new ProjectCustomAttributesService(deps, projects),
    rateLimiter: new RateLimiter(deps.config.rateLimits),
    storage,
    repositories: new RepositoriesService(deps, projects, storage),
  };
}
