/**
 * Jobs with `environment:` make environments and deployments (the `ciJobChanges` point): a `start` job
 * gets a deployment that follows its status; a successful deployment makes its environment available
 * (url, tier, `auto_stop_in`); a successful `stop` job stops its environment.
 */
import type { EntityManager } from 'typeorm';
import { In } from 'typeorm';
import { parseDuration } from '../ci_config/index.js';
import type { Events } from '../core/events.js';
import { nextInternalId } from '../db/internal-ids.js';
import type { Job } from '../pipelines/pipeline.entity.js';
import type { JobChangesObserver } from '../pipelines/job-changes.js';
import { Deployment, Environment, type EnvironmentTier } from './environment.entity.js';
import {
  deploymentStatusFor,
  environmentSlug,
  FINISHED_DEPLOYMENT,
  guessTier,
  jobEnvironment,
  type JobEnvironment,
} from './rules.js';

export class JobTracking implements JobChangesObserver {
  constructor(private readonly events: Events) {}

  async jobsChanged(manager: EntityManager, jobs: readonly Job[]): Promise<void> {
    // Most jobs have no environment: nothing is read for them.
    const mine = jobs.filter((job) => job.options.environment !== undefined);
    if (mine.length === 0) return;
    const withEnv = mine
      .map((job) => ({ job, env: jobEnvironment(job) }))
      .filter((item): item is { job: Job; env: JobEnvironment } => item.env !== null);
    if (withEnv.length === 0) return;
    const starts = withEnv.filter(({ env }) => env.action === 'start');
    const existing = starts.length
      ? await manager.findBy(Deployment, { deployableId: In(starts.map(({ job }) => job.id)) })
      : [];
    const byJob = new Map(existing.map((d) => [d.deployableId!, d]));
    for (const { job, env } of withEnv) {
      if (env.action === 'start') {
        const deployment = byJob.get(job.id) ?? (await this.createDeployment(manager, job, env));
        await this.follow(manager, deployment, job, env);
      } else if (env.action === 'stop') await this.followStopJob(manager, job, env);
      else if (job.status === 'created')
        await this.ensureEnvironment(manager, job.projectId, env.name, env.tier);
    }
  }

  /** The project's environment of this name, created (available, tier given or guessed) when missing. */
  async ensureEnvironment(
    manager: EntityManager,
    projectId: number,
    name: string,
    tier?: EnvironmentTier,
  ): Promise<Environment> {
    const found = await manager.findOneBy(Environment, { projectId, name });
    if (found) return found;
    const now = new Date();
    await manager.query(
      `INSERT INTO environments (project_id, name, slug, state, tier, created_at, updated_at)
       VALUES ($1, $2, $3, 'available', $4, $5, $5) ON CONFLICT (project_id, name) DO NOTHING`,
      [projectId, name, environmentSlug(name), tier ?? guessTier(name), now],
    );
    return manager.findOneByOrFail(Environment, { projectId, name });
  }

  private async createDeployment(manager: EntityManager, job: Job, env: JobEnvironment): Promise<Deployment> {
    const environment = await this.ensureEnvironment(manager, job.projectId, env.name, env.tier);
    const now = new Date();
    return manager.save(
      manager.create(Deployment, {
        projectId: job.projectId,
        environmentId: environment.id,
        iid: await nextInternalId(manager, job.projectId, 'deployments'),
        ref: job.ref,
        tag: job.tag,
        sha: job.sha,
        userId: job.userId,
        deployableId: job.id,
        status: 'created',
        finishedAt: null,
        createdAt: now,
        updatedAt: now,
      }),
    );
  }

  /** The deployment moves with its job; on success its environment takes what the job says of it. */
  private async follow(manager: EntityManager, deployment: Deployment, job: Job, env: JobEnvironment) {
    const status = deploymentStatusFor(job.status);
    if (status === null || status === deployment.status) return;
    const now = new Date();
    deployment.status = status;
    deployment.updatedAt = now;
    deployment.userId = job.userId ?? deployment.userId;
    deployment.finishedAt = FINISHED_DEPLOYMENT.includes(status) ? now : null;
    await manager.update(Deployment, deployment.id, {
      status,
      updatedAt: now,
      userId: deployment.userId,
      finishedAt: deployment.finishedAt,
    });
    if (status === 'success') await this.deployed(manager, deployment.environmentId, env, now);
  }

  /** GitLab's UpdateEnvironmentService: started again, its url, tier and auto stop from the job. */
  private async deployed(manager: EntityManager, environmentId: number, env: JobEnvironment, now: Date) {
    const seconds = env.autoStopIn === undefined ? null : parseDuration(env.autoStopIn);
    const autoStopAt = seconds === null ? null : new Date(now.getTime() + seconds * 1000);
    await manager.update(Environment, environmentId, {
      state: 'available',
      autoDeleteAt: null,
      updatedAt: now,
      ...(env.url ? { externalUrl: env.url.slice(0, 255) } : {}),
      ...(env.tier ? { tier: env.tier } : {}),
      ...(env.autoStopIn !== undefined ? { autoStopAt } : {}),
    });
    if (autoStopAt)
      await this.events.publish(
        manager,
        'environments.auto_stop_due',
        { environmentId },
        { startAfter: autoStopAt },
      );
  }

  /** A stop job that succeeds stops its environment; one that fails or is canceled puts a stopping one back. */
  private async followStopJob(manager: EntityManager, job: Job, env: JobEnvironment) {
    if (!['success', 'failed', 'canceled'].includes(job.status)) return;
    const environment = await manager.findOneBy(Environment, { projectId: job.projectId, name: env.name });
    if (!environment) return;
    const now = new Date();
    if (job.status === 'success' && environment.state !== 'stopped')
      await manager.update(Environment, environment.id, {
        state: 'stopped',
        autoStopAt: null,
        updatedAt: now,
      });
    else if (job.status !== 'success' && environment.state === 'stopping')
      await manager.update(Environment, environment.id, { state: 'available', updatedAt: now });
  }
}
