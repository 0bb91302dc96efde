import { clusterAgentsAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { ClusterAgents1767745500000 } from './migrations/1767745500000-cluster-agents.js';
import { ClusterAgent, ClusterAgentToken } from './cluster-agent.entity.js';
import { clusterAgentsHandlers } from './cluster-agents.handlers.js';
import { ClusterAgentsService, type AgentInfo } from './cluster-agents.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    clusterAgents: ClusterAgentsService;
  }
}

declare module '../core/credentials.js' {
  interface PrincipalTypes {
    /** The agent server's token (`Authorization: Bearer glagent-...`): the agent and its project. */
    KubernetesAgentToken: AgentInfo;
  }
}

export const clusterAgentsManifest = defineFamily({
  name: 'cluster_agents',
  abilities: clusterAgentsAbilities,
  entities: [ClusterAgent, ClusterAgentToken],
  migrations: [ClusterAgents1767745500000],
  services: [defineService('clusterAgents', [], (core) => new ClusterAgentsService(core))],
  credentials: {
    KubernetesAgentToken:
      ({ clusterAgents }) =>
      (secret) =>
        clusterAgents.authenticate(secret),
  },
  handlers: clusterAgentsHandlers,
});
