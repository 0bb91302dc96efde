import { defineFamily } from '../core/family.js';

/**
 * Git over HTTP: clone, fetch and push at `<full_path>.git`, and the hooks' calls back during a push.
 * Its routes (smart-http.ts) sit beside the API's, not in the contract; the composition root mounts
 * them with the services and subject resolvers the API pipeline uses.
 */
export const gitHttpManifest = defineFamily({
  name: 'git_http',
});
