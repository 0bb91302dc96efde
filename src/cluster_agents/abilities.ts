import { defineAbilities } from '../core/abilities.js';
import { AccessLevel } from '../core/access-level.js';

/** Agents and their tokens: Developer reads them; Maintainer registers, removes and issues tokens. */
export const clusterAgentsAbilities = defineAbilities({
  project: {
    read_cluster_agent: { minimum: AccessLevel.Developer },
    admin_cluster: { minimum: AccessLevel.Maintainer },
  },
});

declare module '../core/abilities.js' {
  interface FamilyAbilities {
    cluster_agents: typeof clusterAgentsAbilities;
  }
}
