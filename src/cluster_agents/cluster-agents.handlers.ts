import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import {
  presentAgentInfo,
  presentAgentToken,
  presentAgentTokenBasic,
  presentAgentTokenWithSecret,
  presentClusterAgent,
} from './cluster-agent.presenter.js';
import { repositoryRelativePath } from './cluster-agents.service.js';

export const clusterAgentsHandlers = defineHandlers(['clusterAgents'], {
  async listClusterAgents({ params, subject, services, request }) {
    const page = await services.clusterAgents.list(subject, params, request);
    return pagedResponse(page, (agent) => presentClusterAgent(agent, subject));
  },

  async getClusterAgent({ params, subject, services }) {
    const agent = await services.clusterAgents.get(subject, params.agent_id);
    return { status: 200, body: presentClusterAgent(agent, subject) };
  },

  async registerClusterAgent({ body, subject, caller, services }) {
    const agent = await services.clusterAgents.register(caller, subject, body.name);
    return { status: 201, body: presentClusterAgent(agent, subject) };
  },

  async deleteClusterAgent({ params, subject, services }) {
    await services.clusterAgents.remove(subject, params.agent_id);
    return { status: 204, body: null };
  },

  async listClusterAgentTokens({ params, subject, services, request }) {
    const page = await services.clusterAgents.listTokens(subject, params.agent_id, params, request);
    return pagedResponse(page, presentAgentTokenBasic);
  },

  async getClusterAgentToken({ params, subject, services }) {
    const token = await services.clusterAgents.getToken(subject, params.agent_id, params.token_id);
    return { status: 200, body: presentAgentToken(token) };
  },

  async createClusterAgentToken({ params, body, subject, caller, services }) {
    const created = await services.clusterAgents.createToken(caller, subject, params.agent_id, body);
    return { status: 201, body: presentAgentTokenWithSecret(created.token, created.secret) };
  },

  async revokeClusterAgentToken({ params, subject, services }) {
    await services.clusterAgents.revokeToken(subject, params.agent_id, params.token_id);
    return { status: 204, body: null };
  },

  async getKubernetesAgentInfo({ principal: agent }) {
    return { status: 200, body: presentAgentInfo(agent, repositoryRelativePath(agent.project.id)) };
  },
});
