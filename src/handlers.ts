import type { HandlerMap } from './core/handler.js';
import { customAttributesHandlers } from './projects/custom-attributes.handlers.js';
import { projectsHandlers } from './projects/projects.handlers.js';

/** One handler per operation in the contract: a missing one does not compile. */
export const handlers: HandlerMap = {
  ...projectsHandlers,
  ...customAttributesHandlers,
};
