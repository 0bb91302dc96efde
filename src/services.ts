import type { DataSource } from 'typeorm';
import type { Config } from './config.js';
import { AccessTokensService } from './access_tokens/access-tokens.service.js';
import { BranchesService } from './branches/branches.service.js';
import type { AnySubscriber, Events } from './core/events.js';
import { RateLimiter } from './core/rate-limit.js';
import { RepositoriesService } from './git/repositories.service.js';
import { RepositoryStorage } from './git/storage.js';
import { GroupsService } from './groups/groups.service.js';
import { MembersService } from './members/members.service.js';
import { NamespacesService } from './namespaces/namespaces.service.js';
import { ProjectCustomAttributesService } from './projects/custom-attributes.service.js';
import { projectsSubscribers } from './projects/projects.subscribers.js';
import { ProjectsService } from './projects/projects.service.js';
import { ProtectedBranchesService } from './protected_branches/protected-branches.service.js';
import { ProtectedTagsService } from './protected_tags/protected-tags.service.js';
import { RepositoryService } from './repository/repository.service.js';
import { SidekiqService } from './sidekiq/sidekiq.service.js';
import { CommitsService } from './commits/commits.service.js';
import { FilesService } from './files/files.service.js';
import { TagsService } from './tags/tags.service.js';
import { UsersService } from './users/users.service.js';

export interface ServiceDeps {
  dataSource: DataSource;
  config: Config;
  /** Where services publish what follows their changes. */
  events: Events;
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
  branches: BranchesService;
  protectedBranches: ProtectedBranchesService;
  tags: TagsService;
  protectedTags: ProtectedTagsService;
  repository: RepositoryService;
  commits: CommitsService;
  files: FilesService;
  sidekiq: SidekiqService;
}

export function createServices(deps: ServiceDeps): Services {
  const users = new UsersService(deps);
  const storage = new RepositoryStorage(deps.config.storages);
  const projects = new ProjectsService(deps, storage);
  const groups = new GroupsService(deps, storage);
  const repositories = new RepositoriesService(deps, projects, storage);
  const services: Services = {
    users,
    namespaces: new NamespacesService(deps),
    groups,
    members: new MembersService(deps, { projects, groups }),
    accessTokens: new AccessTokensService(deps, { projects, groups, users }),
    projects,
    projectCustomAttributes: new ProjectCustomAttributesService(deps, projects),
    rateLimiter: new RateLimiter(deps.config.rateLimits),
    storage,
    repositories,
    branches: new BranchesService(deps, { projects, repositories }),
    protectedBranches: new ProtectedBranchesService(deps, { projects, repositories }),
    tags: new TagsService(deps, repositories),
    protectedTags: new ProtectedTagsService(deps, projects),
    sidekiq: new SidekiqService(deps.events),
  } as Services;
  // Services that use others through the whole registry, once it exists.
  services.repository = new RepositoryService(services);
  services.commits = new CommitsService(services);
  services.files = new FilesService(services);
  return services;
}

/** Every family's subscribers to events, built from the services they use. */
export function createSubscribers(services: Services): AnySubscriber[] {
  return [...projectsSubscribers(services)];
}
