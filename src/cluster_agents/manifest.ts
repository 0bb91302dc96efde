import { defineFamily, defineService } from '../core/family.js';
import { ClusterAgents1767745500000 } from './migrations/1767745500000-cluster-agents.js';
import { ClusterAgent, ClusterAgentToken } from './cluster-agent.entity.js';
import { clusterAgentsHandlers } from './cluster-agents.handlers.js';
import { ClusterAgentsService } from './cluster-agents.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    clusterAgents: ClusterAgentsService;
  }
}

export const clusterAgentsManifest = defineFamily({
  name: 'cluster_agents',
  entities: [ClusterAgent, ClusterAgentToken],
  migrations: [ClusterAgents1767745500000],
  services: [defineService('clusterAgents', [], (core) => new ClusterAgentsService(core))],
  handlers: clusterAgentsHandlers,
});
