import type { components } from '../../generated/openapi.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { ClusterAgent, ClusterAgentToken } from './cluster-agent.entity.js';
import type { AgentInfo } from './cluster-agents.service.js';

type ClusterAgentJson = components['schemas']['ClusterAgent'];
type TokenBasicJson = components['schemas']['ClusterAgentTokenBasic'];
type TokenJson = components['schemas']['ClusterAgentToken'];
type TokenWithSecretJson = components['schemas']['ClusterAgentTokenWithSecret'];

export function presentClusterAgent(agent: ClusterAgent, { project }: ProjectView): ClusterAgentJson {
  return {
    id: agent.id,
    name: agent.name,
    config_project: {
      id: project.id,
      description: project.description ?? null,
      name: project.name,
      name_with_namespace: `${project.namespace.fullName} / ${project.name}`,
      path: project.path,
      path_with_namespace: `${project.namespace.fullPath}/${project.path}`,
      created_at: project.createdAt.toISOString(),
    },
    created_at: agent.createdAt.toISOString(),
    created_by_user_id: agent.createdByUserId,
  };
}

/** Lists show no secret and no `last_used_at`; `created_by_user_id` is a string, as GitLab declares it. */
export function presentAgentTokenBasic(token: ClusterAgentToken): TokenBasicJson {
  return {
    id: token.id,
    name: token.name,
    description: token.description,
    agent_id: token.agentId,
    status: token.status,
    created_at: token.createdAt.toISOString(),
    created_by_user_id: token.createdByUserId === null ? null : String(token.createdByUserId),
  };
}

export const presentAgentToken = (token: ClusterAgentToken): TokenJson => ({
  ...presentAgentTokenBasic(token),
  last_used_at: token.lastUsedAt?.toISOString() ?? null,
});

export const presentAgentTokenWithSecret = (
  token: ClusterAgentToken,
  secret: string,
): TokenWithSecretJson => ({
  ...presentAgentTokenBasic(token),
  token: secret,
});

type AgentInfoJson = components['schemas']['KubernetesAgentInfo'];

/** GitLab's agent_info; without Gitaly, the "address" is the storage's directory (see the spec). */
export function presentAgentInfo(info: AgentInfo, relativePath: string): AgentInfoJson {
  const { agent, project } = info;
  return {
    project_id: project.id,
    agent_id: agent.id,
    agent_name: agent.name,
    gitaly_info: { address: `file://${info.storageRoot}`, token: '', features: {} },
    gitaly_repository: {
      storage_name: project.repositoryStorage,
      relative_path: relativePath,
      gl_repository: `project-${project.id}`,
      gl_project_path: `${project.namespace.fullPath}/${project.path}`,
    },
    default_branch: project.defaultBranch ?? 'main',
  };
}
