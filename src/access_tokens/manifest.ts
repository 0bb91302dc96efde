import { accessTokensAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { accessTokensHandlers } from './access-tokens.handlers.js';
import { AccessTokensService } from './access-tokens.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    accessTokens: AccessTokensService;
  }
}

export const accessTokensManifest = defineFamily({
  name: 'access_tokens',
  abilities: accessTokensAbilities,
  services: [
    defineService(
      'accessTokens',
      ['projects', 'groups', 'users'],
      (core, deps) => new AccessTokensService(core, deps),
    ),
  ],
  handlers: accessTokensHandlers,
});
