import { accessTokensHandlers } from './access_tokens/access-tokens.handlers.js';
import { branchesHandlers } from './branches/branches.handlers.js';
import { commitsHandlers } from './commits/commits.handlers.js';
import type { HandlerMap } from './core/handler.js';
import { filesHandlers } from './files/files.handlers.js';
import { groupsHandlers } from './groups/groups.handlers.js';
import { membersHandlers } from './members/members.handlers.js';
import { customAttributesHandlers } from './projects/custom-attributes.handlers.js';
import { projectsHandlers } from './projects/projects.handlers.js';
import { protectedBranchesHandlers } from './protected_branches/protected-branches.handlers.js';
import { protectedTagsHandlers } from './protected_tags/protected-tags.handlers.js';
import { repositoryHandlers } from './repository/repository.handlers.js';
import { sidekiqHandlers } from './sidekiq/sidekiq.handlers.js';
import { tagsHandlers } from './tags/tags.handlers.js';
import { usersHandlers } from './users/users.handlers.js';

/** One handler per operation in the contract: a missing one does not compile. */
export const handlers: HandlerMap = {
  ...projectsHandlers,
  ...customAttributesHandlers,
  ...usersHandlers,
  ...groupsHandlers,
  ...membersHandlers,
  ...accessTokensHandlers,
  ...commitsHandlers,
  ...filesHandlers,
  ...branchesHandlers,
  ...protectedBranchesHandlers,
  ...tagsHandlers,
  ...protectedTagsHandlers,
  ...repositoryHandlers,
  ...sidekiqHandlers,
};
