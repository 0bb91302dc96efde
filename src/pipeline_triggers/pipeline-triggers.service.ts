import { In, type DataSource } from 'typeorm';
import { generateToken, hashToken, type Caller } from '../core/auth.js';
import { ApiError, forbidden, recordNotFound } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import type { ProjectView } from '../projects/projects.service.js';
import { SecretBox } from '../remote_mirrors/secret-box.js';
import { User } from '../users/user.entity.js';
import { canAdminTrigger } from './abilities.js';
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

  constructor(core: CoreDeps) {
    this.dataSource = core.dataSource;
    this.secrets = SecretBox.fromConfig(core.config);
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
   * The trigger a token names, for the project named by `projectRef` (id or full path), with its owner
   * as the caller that starts the pipeline. Anything else is GitLab's bare 404, so that a token does not
   * tell whether a project exists.
   */
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

  /** Records the token's use, in the transaction that starts its pipeline. */
  async touch(trigger: PipelineTrigger, manager = this.dataSource.manager): Promise<void> {
    await manager.getRepository(PipelineTrigger).update(trigger.id, { lastUsed: new Date() });
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
