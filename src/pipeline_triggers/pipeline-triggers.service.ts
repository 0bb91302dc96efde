import { In, type DataSource } from 'typeorm';
import { generateToken, hashToken, type Caller } from '../core/auth.js';
import { ApiError, forbidden, recordNotFound } from '../core/errors.js';
import type { Contributions, CoreDeps, ServiceRegistry } from '../core/family.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import type { Pipeline } from '../pipelines/pipeline.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { SecretBox } from '../remote_mirrors/secret-box.js';
import { User } from '../users/user.entity.js';
import { canAdminTrigger } from './abilities.js';
import './job-token-triggers.js';
import { PipelineTrigger } from './trigger.entity.js';

export const TRIGGER_TOKEN_PREFIX = 'glptt-';
const NOT_OWNER = 'The current user is not authorized to update the pipeline trigger token';

/** A trigger as presented: the token opened, and its owner. */
export interface TriggerRecord {
  trigger: PipelineTrigger;
  token: string;
  owner: User | null;
}

export class PipelineTriggersService {
  private readonly dataSource: DataSource;
  private readonly secrets: SecretBox;
  private readonly contributions: Contributions;

  constructor(
    core: CoreDeps,
    private readonly deps: Pick<ServiceRegistry, 'projects' | 'pipelines' | 'repositories'>,
  ) {
    this.dataSource = core.dataSource;
    this.secrets = SecretBox.fromConfig(core.config);
    this.contributions = core.contributions;
  }

  async list(view: ProjectView, params: PageParams, request: RequestInfo): Promise<Page<TriggerRecord>> {
    const query = this.dataSource
      .getRepository(PipelineTrigger)
      .createQueryBuilder('t')
      .where('t.project_id = :projectId', { projectId: view.project.id })
      .orderBy('t.id', 'ASC');
    const page = await paginateOffset(query, params, request);
    return { ...page, items: await this.records(page.items) };
  }

  async get(view: ProjectView, triggerId: number): Promise<TriggerRecord> {
    const [record] = await this.records([await this.find(view, triggerId)]);
    return record;
  }

  async create(caller: Caller, view: ProjectView, description: string): Promise<TriggerRecord> {
    const token = generateToken(TRIGGER_TOKEN_PREFIX);
    const now = new Date();
    const triggers = this.dataSource.getRepository(PipelineTrigger);
    const { identifiers } = await triggers.insert({
      projectId: view.project.id,
      ownerId: caller.user!.id,
      description,
      tokenEncrypted: this.secrets.seal(token),
      tokenDigest: hashToken(token),
      lastUsed: null,
      createdAt: now,
      updatedAt: now,
    });
    return this.get(view, identifiers[0].id as number);
  }

  /** Only the owner edits a token (GitLab's `admin_trigger`); anyone else is refused with GitLab's words. */
  async update(
    caller: Caller,
    view: ProjectView,
    triggerId: number,
    description: string | undefined,
  ): Promise<TriggerRecord> {
    const trigger = await this.find(view, triggerId);
    if (!canAdminTrigger(caller, view.accessLevel, trigger.ownerId)) throw forbidden(NOT_OWNER);
    if (description !== undefined)
      await this.dataSource
        .getRepository(PipelineTrigger)
        .update(trigger.id, { description, updatedAt: new Date() });
    return this.get(view, trigger.id);
  }

  async remove(view: ProjectView, triggerId: number): Promise<void> {
    const trigger = await this.find(view, triggerId);
    await this.dataSource.getRepository(PipelineTrigger).delete(trigger.id);
  }

  /**
   * `POST /projects/:id/trigger/pipeline`: a trigger token starts a pipeline (source `trigger`) as its
   * owner; a CI job token, through the `ciJobTokens` point, a multi-project one (source `pipeline`) as
   * the job's user, linked upstream. Whatever does not add up is GitLab's bare 404, so that a token says
   * nothing about projects it does not belong to.
   */
  async trigger(projectRef: string, input: TriggerInput): Promise<{ view: ProjectView; pipeline: Pipeline }> {
    const variables = triggerVariables(input.variables);
    const payload = {
      key: 'TRIGGER_PAYLOAD',
      value: JSON.stringify({
        ref: input.ref,
        id: projectRef,
        variables,
        ...(input.inputs ? { inputs: input.inputs } : {}),
      }),
      variable_type: 'file' as const,
    };
    const given = [...Object.entries(variables).map(([key, value]) => ({ key, value })), payload];
    const found = await this.authenticate(input.token);
    if (found) {
      const view = await this.projectAs(found.owner, projectRef);
      if (!view || view.project.id !== found.trigger.projectId) throw notFoundPlain();
      const pipeline = await this.start(view, found.owner, input, {
        source: 'trigger',
        variables: given,
        triggerId: found.trigger.id,
      });
      await this.dataSource.getRepository(PipelineTrigger).update(found.trigger.id, { lastUsed: new Date() });
      return { view, pipeline };
    }
    for (const resolver of this.contributions.of('ciJobTokens')) {
      const job = await resolver.resolve(input.token);
      if (!job) continue;
      const view = await this.projectAs(job.user, projectRef);
      if (!view) throw notFoundPlain();
      const pipeline = await this.start(view, job.user, input, {
        source: 'pipeline',
        variables: given,
        upstream: { pipelineId: job.pipelineId, jobId: job.jobId },
      });
      return { view, pipeline };
    }
    throw notFoundPlain();
  }

  /** The project as `user` sees it, or null when they do not. */
  private async projectAs(user: User, projectRef: string): Promise<ProjectView | null> {
    try {
      return await this.deps.projects.find({ user, token: null }, projectRef);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  }

  /** Creates the pipeline as `user`, who must be allowed to run one on the ref; refusals are GitLab's 400. */
  private async start(
    view: ProjectView,
    user: User,
    input: TriggerInput,
    how: {
      source: 'trigger' | 'pipeline';
      variables: Array<{ key: string; value: string; variable_type?: 'env_var' | 'file' }>;
      triggerId?: number;
      upstream?: { pipelineId: number; jobId: number };
    },
  ): Promise<Pipeline> {
    const refused = (messages: string[]) => new ApiError(400, { message: { base: messages } });
    const { pipelines } = this.deps;
    const caller = { user, token: null };
    const branch = await this.deps.repositories.open(view).git.resolveCommit(`refs/heads/${input.ref}`);
    if (branch && !(await pipelines.mayRunOnBranch(caller, view, input.ref)))
      throw refused([
        `You do not have sufficient permission to run a pipeline on '${input.ref}'. Please select a different branch or contact your administrator for assistance.`,
      ]);
    const result = await pipelines.create({
      project: view,
      ref: input.ref,
      user,
      source: how.source,
      variables: how.variables,
      inputs: input.inputs,
      triggerId: how.triggerId,
      upstream: how.upstream,
    });
    if ('errors' in result) throw refused(result.errors);
    return result.pipeline;
  }

  /** The trigger a token names and its owner, when that owner is an active user. */
  async authenticate(token: string): Promise<{ trigger: PipelineTrigger; owner: User } | null> {
    if (!token) return null;
    const trigger = await this.dataSource
      .getRepository(PipelineTrigger)
      .findOneBy({ tokenDigest: hashToken(token) });
    if (!trigger || trigger.ownerId === null) return null;
    const owner = await this.dataSource.getRepository(User).findOneBy({ id: trigger.ownerId });
    if (!owner || owner.state !== 'active') return null;
    return { trigger, owner };
  }

  private async find(view: ProjectView, triggerId: number): Promise<PipelineTrigger> {
    const trigger = await this.dataSource
      .getRepository(PipelineTrigger)
      .findOneBy({ id: triggerId, projectId: view.project.id });
    if (!trigger) throw recordNotFound();
    return trigger;
  }

  private async records(triggers: PipelineTrigger[]): Promise<TriggerRecord[]> {
    const ownerIds = [...new Set(triggers.map((t) => t.ownerId).filter((id): id is number => id !== null))];
    const owners = ownerIds.length
      ? await this.dataSource.getRepository(User).findBy({ id: In(ownerIds) })
      : [];
    const byId = new Map(owners.map((user) => [user.id, user]));
    return triggers.map((trigger) => ({
      trigger,
      token: this.secrets.open(trigger.tokenEncrypted),
      owner: trigger.ownerId === null ? null : (byId.get(trigger.ownerId) ?? null),
    }));
  }
}

export interface TriggerInput {
  token: string;
  ref: string;
  variables?: unknown;
  inputs?: Record<string, unknown>;
}

/** GitLab's answer to a token or project that does not add up: `404 Not Found`, naming nothing. */
const notFoundPlain = () => new ApiError(404, { message: '404 Not Found' });

/** `variables` must be a map of strings, in GitLab's words otherwise. */
export function triggerVariables(variables: unknown): Record<string, string> {
  if (variables === undefined || variables === null || variables === '') return {};
  if (
    typeof variables !== 'object' ||
    Array.isArray(variables) ||
    !Object.values(variables).every((value) => typeof value === 'string')
  )
    throw new ApiError(400, { message: 'variables needs to be a map of key-valued strings' });
  return variables as Record<string, string>;
}
