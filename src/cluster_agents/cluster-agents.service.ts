import type { DataSource } from 'typeorm';
import { generateToken, hashToken, type Caller } from '../core/auth.js';
import { ApiError, recordNotFound, validationFailed } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import { isUniqueViolation } from '../db/errors.js';
import { RepositoryStorage } from '../git/storage.js';
import { Project } from '../projects/project.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { ClusterAgent, ClusterAgentToken } from './cluster-agent.entity.js';

export const AGENT_TOKEN_PREFIX = 'glagent-';
/** GitLab's limit and its words. */
const MAX_ACTIVE_TOKENS = 2;
const TOO_MANY_TOKENS = 'An agent can have only two active tokens at a time';
/** GitLab's `cluster_agent_name_regex`: a DNS label. */
const AGENT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const AGENT_NAME_MESSAGE =
  "can contain only lowercase letters, digits, and '-', but cannot start or end with '-'";

/** What the agent server learns about the agent whose token it holds. */
export interface AgentInfo {
  agent: ClusterAgent;
  project: Project & { namespace: { fullPath: string } };
  storageRoot: string;
}

export class ClusterAgentsService {
  private readonly dataSource: DataSource;
  private readonly storages: Record<string, string>;

  constructor(core: CoreDeps) {
    this.dataSource = core.dataSource;
    this.storages = core.config.storages;
  }

  list(view: ProjectView, params: PageParams, request: RequestInfo): Promise<Page<ClusterAgent>> {
    const query = this.dataSource
      .getRepository(ClusterAgent)
      .createQueryBuilder('a')
      .where('a.project_id = :projectId', { projectId: view.project.id })
      .orderBy('a.id', 'ASC');
    return paginateOffset(query, params, request);
  }

  async get(view: ProjectView, agentId: number): Promise<ClusterAgent> {
    const agent = await this.dataSource
      .getRepository(ClusterAgent)
      .findOneBy({ id: agentId, projectId: view.project.id });
    if (!agent) throw recordNotFound();
    return agent;
  }

  async register(caller: Caller, view: ProjectView, name: string): Promise<ClusterAgent> {
    if (name.length > 63 || !AGENT_NAME.test(name)) throw validationFailed({ name: [AGENT_NAME_MESSAGE] });
    const repository = this.dataSource.getRepository(ClusterAgent);
    try {
      const inserted = await repository.insert({
        projectId: view.project.id,
        name,
        createdByUserId: caller.user?.id ?? null,
        createdAt: new Date(),
      });
      return await repository.findOneByOrFail({ id: inserted.identifiers[0].id as number });
    } catch (err) {
      if (isUniqueViolation(err)) throw validationFailed({ name: ['has already been taken'] });
      throw err;
    }
  }

  /** Revokes the agent's tokens and removes the registration, in one transaction. */
  async remove(view: ProjectView, agentId: number): Promise<void> {
    const agent = await this.get(view, agentId);
    await this.dataSource.transaction(async (tx) => {
      await tx.getRepository(ClusterAgentToken).update({ agentId: agent.id }, { status: 'revoked' });
      await tx.getRepository(ClusterAgent).delete(agent.id);
    });
  }

  async listTokens(
    view: ProjectView,
    agentId: number,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<ClusterAgentToken>> {
    const agent = await this.get(view, agentId);
    const query = this.dataSource
      .getRepository(ClusterAgentToken)
      .createQueryBuilder('t')
      .where('t.agent_id = :agentId', { agentId: agent.id })
      .andWhere("t.status = 'active'")
      .orderBy('t.id', 'ASC');
    return paginateOffset(query, params, request);
  }

  /** An active token of the agent; a revoked one answers 404, as GitLab does. */
  async getToken(view: ProjectView, agentId: number, tokenId: number): Promise<ClusterAgentToken> {
    const agent = await this.get(view, agentId);
    const token = await this.dataSource
      .getRepository(ClusterAgentToken)
      .findOneBy({ id: tokenId, agentId: agent.id, status: 'active' });
    if (!token) throw recordNotFound();
    return token;
  }

  /**
   * A new token and its secret, shown once. The agent's row is locked so that two concurrent creations
   * cannot both pass the two-token limit.
   */
  async createToken(
    caller: Caller,
    view: ProjectView,
    agentId: number,
    input: { name: string; description?: string },
  ): Promise<{ token: ClusterAgentToken; secret: string }> {
    const agent = await this.get(view, agentId);
    const secret = generateToken(AGENT_TOKEN_PREFIX);
    const token = await this.dataSource.transaction(async (tx) => {
      const locked: unknown[] = await tx.query('SELECT id FROM cluster_agents WHERE id = $1 FOR UPDATE', [
        agent.id,
      ]);
      if (locked.length === 0) throw recordNotFound();
      const tokens = tx.getRepository(ClusterAgentToken);
      if ((await tokens.countBy({ agentId: agent.id, status: 'active' })) >= MAX_ACTIVE_TOKENS)
        throw new ApiError(400, { message: TOO_MANY_TOKENS });
      const inserted = await tokens.insert({
        agentId: agent.id,
        name: input.name,
        description: input.description ?? null,
        tokenDigest: hashToken(secret),
        status: 'active',
        createdByUserId: caller.user?.id ?? null,
        createdAt: new Date(),
        lastUsedAt: null,
      });
      return tokens.findOneByOrFail({ id: inserted.identifiers[0].id as number });
    });
    return { token, secret };
  }

  async revokeToken(view: ProjectView, agentId: number, tokenId: number): Promise<void> {
    const token = await this.getToken(view, agentId, tokenId);
    await this.dataSource.getRepository(ClusterAgentToken).update(token.id, { status: 'revoked' });
  }

  /**
   * The agent server's call: an active token (by its digest) names its agent and project. Its use is
   * recorded before the answer, so `last_used_at` has moved when the agent server hears back.
   */
  /** The agent whose active token this is, with its project; null for any other string. */
  async authenticate(secret: string): Promise<AgentInfo | null> {
    if (!secret.startsWith(AGENT_TOKEN_PREFIX)) return null;
    const token = await this.dataSource
      .getRepository(ClusterAgentToken)
      .findOneBy({ tokenDigest: hashToken(secret), status: 'active' });
    if (!token) return null;
    const agent = await this.dataSource.getRepository(ClusterAgent).findOneBy({ id: token.agentId });
    const project = agent
      ? await this.dataSource
          .getRepository(Project)
          .findOne({ where: { id: agent.projectId }, relations: { namespace: true } })
      : null;
    if (!agent || !project?.namespace || project.markedForDeletionAt) return null;
    await this.dataSource.getRepository(ClusterAgentToken).update(token.id, { lastUsedAt: new Date() });
    return {
      agent,
      project: project as AgentInfo['project'],
      storageRoot: this.storages[project.repositoryStorage] ?? '',
    };
  }
}

/** Where the project's bare repository is, relative to its storage (GitLab's hashed layout). */
export const repositoryRelativePath = (projectId: number) => RepositoryStorage.relativePath(projectId);
