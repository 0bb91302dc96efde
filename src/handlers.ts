import { accessTokensHandlers } from './access_tokens/access-tokens.handlers.js';
import type { HandlerMap } from './core/handler.js';
import { groupsHandlers } from './groups/groups.handlers.js';
import { membersHandlers } from './members/members.handlers.js';
import { customAttributesHandlers } from './projects/custom-attributes.handlers.js';
import { projectsHandlers } from './projects/projects.handlers.js';
import { usersHandlers } from './users/users.handlers.js';

/** One handler per operation in the contract: a missing one does not compile. */
export const handlers: HandlerMap = {
  ...projectsHandlers,
  ...customAttributesHandlers,
  ...usersHandlers,
  ...groupsHandlers,
  ...membersHandlers,
  ...accessTokensHandlers,
};
