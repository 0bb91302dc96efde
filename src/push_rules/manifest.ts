import { pushRulesAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { PushRules1767745201000 } from './migrations/1767745201000-push-rules.js';
import { PushRule } from './push-rule.entity.js';
import { pushRulesHandlers } from './push-rules.handlers.js';
import { PushRulesService } from './push-rules.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    pushRules: PushRulesService;
  }
}

export const pushRulesManifest = defineFamily({
  name: 'push_rules',
  abilities: pushRulesAbilities,
  entities: [PushRule],
  migrations: [PushRules1767745201000],
  services: [defineService('pushRules', [], (core) => new PushRulesService(core))],
  contributes: {
    preReceiveChecks: ({ pushRules }) => pushRules.checks.preReceiveCheck(),
  },
  handlers: pushRulesHandlers,
});
