import { In, type DataSource, type EntityManager } from 'typeorm';
import type { Caller } from '../core/auth.js';
import { ApiError, forbidden, recordNotFound, validationFailed } from '../core/errors.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import { nextInternalId } from '../db/internal-ids.js';
import type { JobRecords } from '../pipelines/jobs.service.js';
import { Job } from '../pipelines/pipeline.entity.js';
import type { PipelinesService } from '../pipelines/pipelines.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import { User } from '../users/user.entity.js';
import { Deployment, Environment, type DeploymentStatus } from './environment.entity.js';
import type { JobTracking } from './job-tracking.js';
import { FINISHED_DEPLOYMENT, validEnvironmentName } from './rules.js';

export interface DeploymentListParams extends PageParams {
  order_by?: 'id' | 'iid' | 'created_at' | 'updated_at' | 'finished_at' | 'ref';
  sort?: 'asc' | 'desc';
  updated_after?: string;
  updated_before?: string;
  finished_after?: string;
  finished_before?: string;
  environment?: string;
  status?: DeploymentStatus;
}

export interface DeploymentCreateInput {
  environment: string;
  sha: string;
  ref: string;
  tag: boolean;
  status: 'running' | 'success' | 'failed' | 'canceled';
}

/** Deployments with what their representations read: users, environments, jobs. */
export interface DeploymentRecords {
  users: Map<number, User>;
  environments: Map<number, Environment>;
  jobs: Map<number, Job>;
  jobRecords: JobRecords | null;
}

const ORDER_COLUMNS: Record<NonNullable<DeploymentListParams['order_by']>, string> = {
  id: 'd.id',
  iid: 'd.iid',
  created_at: 'd.created_at',
  updated_at: 'd.updated_at',
  finished_at: 'd.finished_at',
  ref: 'd.ref',
};

/** A project's deployments: made by jobs (see JobTracking) or through the API. */
export class DeploymentsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly pipelines: PipelinesService,
    private readonly tracking: JobTracking,
  ) {}

  async list(
    view: ProjectView,
    params: DeploymentListParams,
    request: RequestInfo,
  ): Promise<Page<Deployment>> {
    const query = this.dataSource
      .getRepository(Deployment)
      .createQueryBuilder('d')
      .where('d.project_id = :projectId', { projectId: view.project.id });
    const date = (name: string, value: string | undefined, op: string, column: string) => {
      if (value === undefined) return;
      const at = new Date(value);
      if (Number.isNaN(at.getTime())) throw new ApiError(400, { error: `${name} is invalid` });
      query.andWhere(`${column} ${op} :${name}`, { [name]: at });
    };
    date('updated_after', params.updated_after, '>', 'd.updated_at');
    date('updated_before', params.updated_before, '<', 'd.updated_at');
    date('finished_after', params.finished_after, '>', 'd.finished_at');
    date('finished_before', params.finished_before, '<', 'd.finished_at');
    if (params.environment !== undefined)
      query.andWhere(
        'd.environment_id IN (SELECT e.id FROM environments e WHERE e.project_id = :projectId AND e.name = :environment)',
        { environment: params.environment },
      );
    if (params.status) query.andWhere('d.status = :status', { status: params.status });
    const direction = params.sort === 'desc' ? 'DESC' : 'ASC';
    query.orderBy(ORDER_COLUMNS[params.order_by ?? 'id'], direction);
    if ((params.order_by ?? 'id') !== 'id') query.addOrderBy('d.id', direction);
    return paginateOffset(query, params, request);
  }

  async find(
    view: ProjectView,
    id: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Deployment> {
    const deployment = await manager.findOneBy(Deployment, { id, projectId: view.project.id });
    if (!deployment) throw recordNotFound();
    return deployment;
  }

  /** GitLab's Deployments::CreateService: the environment found or created by name, the deployment in `status`. */
  async create(caller: Caller, view: ProjectView, input: DeploymentCreateInput): Promise<Deployment> {
    if (!validEnvironmentName(input.environment)) throw validationFailed({ name: ['is invalid'] });
    const id = await this.dataSource.transaction(async (manager) => {
      const environment = await this.tracking.ensureEnvironment(manager, view.project.id, input.environment);
      const now = new Date();
      const deployment = await manager.save(
        manager.create(Deployment, {
          projectId: view.project.id,
          environmentId: environment.id,
          iid: await nextInternalId(manager, view.project.id, 'deployments'),
          ref: input.ref,
          tag: input.tag,
          sha: input.sha,
          userId: caller.user?.id ?? null,
          deployableId: null,
          status: 'created',
          finishedAt: null,
          createdAt: now,
          updatedAt: now,
        }),
      );
      await this.moveTo(manager, deployment, input.status);
      return deployment.id;
    });
    return this.find(view, id);
  }

  /** Only deployments made through the API change through it (GitLab refuses those of CI jobs). */
  async update(view: ProjectView, id: number, status: DeploymentCreateInput['status']): Promise<Deployment> {
    await this.dataSource.transaction(async (manager) => {
      const deployment = await this.find(view, id, manager);
      if (deployment.deployableId !== null)
        throw forbidden('Deployments created using GitLab CI can not be updated using the API');
      await this.moveTo(manager, deployment, status);
    });
    return this.find(view, id);
  }

  /** A finished deployment that is not its environment's current one (GitLab's Ci::Deployments::DestroyService). */
  async remove(view: ProjectView, id: number): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const deployment = await this.find(view, id, manager);
      if (!['success', 'failed', 'canceled'].includes(deployment.status))
        throw new ApiError(400, { message: 'Cannot destroy running deployment' });
      const last = await manager.findOne(Deployment, {
        where: { environmentId: deployment.environmentId, status: 'success' },
        order: { id: 'DESC' },
      });
      if (last?.id === deployment.id)
        throw new ApiError(400, { message: 'Deployment currently deployed to environment' });
      await manager.delete(Deployment, deployment.id);
    });
  }

  private async moveTo(manager: EntityManager, deployment: Deployment, status: DeploymentStatus) {
    if (deployment.status === status) return;
    const now = new Date();
    await manager.update(Deployment, deployment.id, {
      status,
      updatedAt: now,
      finishedAt: FINISHED_DEPLOYMENT.includes(status) ? now : null,
    });
    // A successful deployment (re)starts its environment.
    if (status === 'success')
      await manager.update(Environment, deployment.environmentId, {
        state: 'available',
        autoDeleteAt: null,
        updatedAt: now,
      });
  }

  async records(view: ProjectView, deployments: Deployment[]): Promise<DeploymentRecords> {
    const manager = this.dataSource.manager;
    const userIds = [...new Set(deployments.map((d) => d.userId).filter((id): id is number => id !== null))];
    const envIds = [...new Set(deployments.map((d) => d.environmentId))];
    const jobIds = [
      ...new Set(deployments.map((d) => d.deployableId).filter((id): id is number => id !== null)),
    ];
    const [users, environments, jobs] = await Promise.all([
      userIds.length ? manager.findBy(User, { id: In(userIds) }) : [],
      envIds.length ? manager.findBy(Environment, { id: In(envIds) }) : [],
      jobIds.length ? manager.findBy(Job, { id: In(jobIds) }) : [],
    ]);
    return {
      users: new Map(users.map((u) => [u.id, u])),
      environments: new Map(environments.map((e) => [e.id, e])),
      jobs: new Map(jobs.map((j) => [j.id, j])),
      jobRecords: jobs.length ? await this.pipelines.jobs.records(view, jobs) : null,
    };
  }
}
