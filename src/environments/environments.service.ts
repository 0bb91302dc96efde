import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../core/auth.js';
import { ApiError, forbidden, recordNotFound, validationFailed } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import { Job } from '../pipelines/pipeline.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { User } from '../users/user.entity.js';
import { DeploymentsService } from './deployments.service.js';
import {
  Deployment,
  Environment,
  type EnvironmentState,
  type EnvironmentTier,
} from './environment.entity.js';
import './environments.events.js';
import { JobTracking } from './job-tracking.js';
import { environmentSlug, guessTier, validEnvironmentName } from './rules.js';

export interface EnvironmentListParams extends PageParams {
  name?: string;
  search?: string;
  states?: EnvironmentState;
}

export interface EnvironmentInput {
  name?: string;
  external_url?: string | null;
  description?: string | null;
  tier?: EnvironmentTier;
  auto_stop_setting?: 'always' | 'with_action';
}

const NAME_MESSAGE =
  "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'";
const badRequest = (reason: string) => new ApiError(400, { message: `400 Bad request - ${reason}` });
const DAY = 86_400_000;

/**
 * A project's environments: the API's reads and changes, stopping (with the last deployment's `on_stop`
 * job), auto stop, and the jobs' side (`tracking`, the `ciJobChanges` observer).
 */
export class EnvironmentsService {
  private readonly dataSource: DataSource;
  private readonly events: Events;
  readonly tracking: JobTracking;
  readonly deployments: DeploymentsService;

  constructor(
    core: CoreDeps,
    private readonly deps: Pick<ServiceRegistry, 'projects' | 'pipelines'>,
  ) {
    this.dataSource = core.dataSource;
    this.events = core.events;
    this.tracking = new JobTracking(core.events);
    this.deployments = new DeploymentsService(core.dataSource, deps.pipelines, this.tracking);
  }

  async list(
    view: ProjectView,
    params: EnvironmentListParams,
    request: RequestInfo,
  ): Promise<Page<Environment>> {
    if (params.name !== undefined && params.search !== undefined)
      throw new ApiError(400, { error: 'name, search cannot be used together' });
    if (params.search !== undefined && params.search.length > 0 && params.search.length < 3)
      throw badRequest('Search query is less than 3 characters');
    const query = this.dataSource
      .getRepository(Environment)
      .createQueryBuilder('e')
      .where('e.project_id = :projectId', { projectId: view.project.id });
    if (params.name !== undefined) query.andWhere('e.name = :name', { name: params.name });
    if (params.search)
      query.andWhere("lower(e.name) LIKE lower(:search) ESCAPE '\\'", {
        search: `${likeEscape(params.search)}%`,
      });
    if (params.states) query.andWhere('e.state = :state', { state: params.states });
    return paginateOffset(query.orderBy('e.id', 'ASC'), params, request);
  }

  async find(
    view: ProjectView,
    id: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Environment> {
    const environment = await manager.findOneBy(Environment, { id, projectId: view.project.id });
    if (!environment) throw recordNotFound();
    return environment;
  }

  /** The environment's last successful deployment (GitLab's `last_deployment`). */
  lastDeployment(environmentId: number, manager: EntityManager = this.dataSource.manager) {
    return manager.findOne(Deployment, {
      where: { environmentId, status: 'success' },
      order: { id: 'DESC' },
    });
  }

  async create(view: ProjectView, input: EnvironmentInput): Promise<Environment> {
    const name = (input.name ?? '').trim();
    if (!validEnvironmentName(name)) throw validationFailed({ name: [NAME_MESSAGE] });
    checkExternalUrl(input.external_url);
    const now = new Date();
    const rows = (await this.dataSource.query(
      `INSERT INTO environments (project_id, name, slug, external_url, description, state, tier, auto_stop_setting, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'available', $6, $7, $8, $8) ON CONFLICT (project_id, name) DO NOTHING RETURNING id`,
      [
        view.project.id,
        name,
        environmentSlug(name),
        input.external_url || null,
        input.description ?? null,
        input.tier ?? guessTier(name),
        input.auto_stop_setting ?? 'always',
        now,
      ],
    )) as Array<{ id: number }>;
    if (rows.length === 0) throw validationFailed({ name: ['has already been taken'] });
    return this.find(view, rows[0].id);
  }

  async update(view: ProjectView, id: number, input: EnvironmentInput): Promise<Environment> {
    const environment = await this.find(view, id);
    checkExternalUrl(input.external_url);
    const patch: Partial<Environment> = {};
    if (input.external_url !== undefined) patch.externalUrl = input.external_url || null;
    if (input.description !== undefined) patch.description = input.description;
    if (input.tier !== undefined) patch.tier = input.tier;
    if (input.auto_stop_setting !== undefined) patch.autoStopSetting = input.auto_stop_setting;
    if (Object.keys(patch).length > 0)
      await this.dataSource
        .getRepository(Environment)
        .update(environment.id, { ...patch, updatedAt: new Date() });
    return this.find(view, id);
  }

  /** Only a stopped environment is deleted (GitLab's `destroy_environment` needs it stopped), with its deployments. */
  async remove(view: ProjectView, id: number): Promise<void> {
    const environment = await this.find(view, id);
    if (environment.state !== 'stopped') throw forbidden();
    await this.dataSource.getRepository(Environment).delete(environment.id);
  }

  /**
   * GitLab's StopService: an available environment whose last deployment names an `on_stop` job that can
   * be played becomes `stopping` and the job is played as the caller (it stops the environment when it
   * succeeds); without one, or with `force`, it is `stopped` at once.
   */
  async stop(caller: Caller, view: ProjectView, id: number, force = false): Promise<Environment> {
    const environment = await this.find(view, id);
    // `force` completes a stop under way too (GitLab's `stop_complete`); a plain stop needs it available.
    if (force && environment.state === 'stopping') {
      await this.dataSource
        .getRepository(Environment)
        .update(
          { id: environment.id, state: 'stopping' },
          { state: 'stopped', autoStopAt: null, updatedAt: new Date() },
        );
      return this.find(view, id);
    }
    if (environment.state !== 'available') return environment;
    const stopJob = force ? null : await this.stopAction(environment);
    let played = false;
    if (stopJob) {
      try {
        await this.deps.pipelines.jobs.play(view, stopJob.id, (caller.user as User | null) ?? null);
        played = true;
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 400) throw error;
      }
    }
    await this.dataSource
      .getRepository(Environment)
      .update(
        { id: environment.id, state: 'available' },
        { state: played ? 'stopping' : 'stopped', autoStopAt: null, updatedAt: new Date() },
      );
    return this.find(view, id);
  }

  /** The `on_stop` job of the last successful deployment's job: a manual job of the same pipeline. */
  private async stopAction(environment: Environment): Promise<Job | null> {
    const deployment = await this.lastDeployment(environment.id);
    if (!deployment?.deployableId) return null;
    const job = await this.dataSource.manager.findOneBy(Job, { id: deployment.deployableId });
    const onStop = (job?.options.environment as { on_stop?: unknown } | undefined)?.on_stop;
    if (!job || typeof onStop !== 'string') return null;
    return this.dataSource.manager.findOne(Job, {
      where: { pipelineId: job.pipelineId, name: onStop, retried: false, when: 'manual' },
      order: { id: 'DESC' },
    });
  }

  /**
   * `stop_stale`: every available environment not updated nor deployed to since `before` (between ten
   * years and one week ago) is stopped, as by the API's stop.
   */
  async stopStale(caller: Caller, view: ProjectView, before: Date): Promise<string> {
    const now = Date.now();
    if (
      Number.isNaN(before.getTime()) ||
      before.getTime() < now - 3653 * DAY ||
      before.getTime() > now - 7 * DAY
    )
      throw badRequest('Invalid Date');
    const rows = (await this.dataSource.query(
      `SELECT e.id FROM environments e WHERE e.project_id = $1 AND e.state = 'available' AND e.updated_at < $2
         AND NOT EXISTS (SELECT 1 FROM deployments d WHERE d.environment_id = e.id AND d.updated_at >= $2)
       ORDER BY e.id LIMIT 1000`,
      [view.project.id, before],
    )) as Array<{ id: number }>;
    for (const { id } of rows) await this.stop(caller, view, id);
    return 'Successfully requested stop for all stale environments';
  }

  /**
   * GitLab's ScheduleToDeleteReviewAppsService: stopped environments of the `review` folder created before
   * `before`, oldest first, at most `limit`, not yet scheduled; unless a dry run, each is to be deleted a
   * week from now (a delayed event).
   */
  async scheduleReviewAppsDeletion(
    view: ProjectView,
    params: { before?: string; limit?: number; dry_run?: boolean },
  ): Promise<{ scheduled: Environment[]; dryRun: boolean }> {
    const before = params.before === undefined ? new Date(Date.now() - 30 * DAY) : new Date(params.before);
    if (Number.isNaN(before.getTime())) throw new ApiError(400, { error: 'before is invalid' });
    const dryRun = params.dry_run ?? true;
    const scheduled = await this.dataSource.transaction(async (manager) => {
      const found = await manager
        .getRepository(Environment)
        .createQueryBuilder('e')
        .setLock('pessimistic_write')
        .where("e.project_id = :projectId AND e.state = 'stopped' AND e.auto_delete_at IS NULL", {
          projectId: view.project.id,
        })
        .andWhere("e.name LIKE 'review/%' AND e.created_at < :before", { before })
        .orderBy('e.created_at', 'ASC')
        .addOrderBy('e.id', 'ASC')
        .limit(params.limit ?? 100)
        .getMany();
      if (dryRun || found.length === 0) return found;
      const at = new Date(Date.now() + 7 * DAY);
      await manager.update(
        Environment,
        found.map((e) => e.id),
        { autoDeleteAt: at },
      );
      for (const e of found)
        await this.events.publish(
          manager,
          'environments.auto_delete_due',
          { environmentId: e.id },
          { startAfter: at },
        );
      return found;
    });
    return { scheduled, dryRun };
  }

  /** A review app's deletion time has come: it goes, unless it was started again meanwhile. */
  async autoDelete(environmentId: number): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM environments WHERE id = $1 AND state = 'stopped' AND auto_delete_at <= now()`,
      [environmentId],
    );
  }

  /** `auto_stop_in` has passed: stopped as the last deployment's user would stop it, unless redeployed since. */
  async autoStop(environmentId: number): Promise<void> {
    const environment = await this.dataSource.manager.findOneBy(Environment, { id: environmentId });
    if (!environment || environment.state !== 'available' || !environment.autoStopAt) return;
    if (environment.autoStopAt.getTime() > Date.now() + 1000) return;
    const deployment = await this.lastDeployment(environment.id);
    const user = deployment?.userId
      ? await this.dataSource.manager.findOneBy(User, { id: deployment.userId })
      : null;
    const caller: Caller = { user, token: null };
    const view = user ? await this.deps.projects.find(caller, environment.projectId).catch(() => null) : null;
    if (view) {
      await this.stop(caller, view, environment.id);
      return;
    }
    await this.dataSource
      .getRepository(Environment)
      .update(
        { id: environment.id, state: 'available' },
        { state: 'stopped', autoStopAt: null, updatedAt: new Date() },
      );
  }
}

/** GitLab's `addressable_url` on `external_url`: an http or https URL, or nothing. */
function checkExternalUrl(url: string | null | undefined): void {
  if (!url) return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw validationFailed({ external_url: ['is blocked: URI is invalid'] });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw validationFailed({ external_url: ['is blocked: Only allowed schemes are http, https'] });
}

/** `%`, `_` and `\` taken literally in a LIKE pattern. */
const likeEscape = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
