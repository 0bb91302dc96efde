import type { DataSource, EntityManager } from 'typeorm';
import { canGroup, canProject, isAdmin } from '../core/abilities.js';
import { generateToken, hashToken, type Caller } from '../core/auth.js';
import { ApiError, badParameter, forbidden, notFound, validationFailed } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import type { PlanLimitsService } from '../plan_limits/plan-limits.service.js';
import { newRunnersToken } from '../groups/group-settings.js';
import {
  groupSubjectOf,
  noAccess,
  projectSubjectOf,
  runnerAccess,
  type RunnerAccess,
} from './runner-access.js';
import { RunnerLists, tagsOf } from './runner-lists.js';
import { loadRelations } from './runner.presenter.js';
import { listRunnerJobs, type RunnerJobParams } from './runner-jobs-list.js';
import type { RequestInfo } from '../core/pagination.js';
import {
  Runner,
  RunnerNamespace,
  RunnerProject,
  type RunnerAccessLevel,
  type RunnerType,
} from './runner.entity.js';

export const RUNNER_TOKEN_PREFIX = 'glrt-';

/** What a runner tells of itself on each request (`info` of POST /jobs/request, /runners/verify). */
export interface RunnerContact {
  info?: Record<string, unknown> | null;
  ip?: string | null;
}

/** The settings a runner is created, registered or edited with (the API's names). */
export interface RunnerSettings {
  description?: string;
  paused?: boolean;
  active?: boolean;
  locked?: boolean;
  run_untagged?: boolean;
  tag_list?: string | string[];
  access_level?: RunnerAccessLevel;
  maximum_timeout?: number;
  maintenance_note?: string;
  maintainer_note?: string;
}

export interface RunnerCreate extends RunnerSettings {
  runner_type: RunnerType;
  group_id?: number;
  project_id?: number;
}

/** A new runner with its authentication token, which is shown once. */
export interface IssuedRunner {
  runner: Runner;
  token: string;
}

type Scope = { kind: 'instance' } | { kind: 'project'; id: number } | { kind: 'group'; id: number };

const LIMIT_NAMES = {
  project: 'ci_registered_project_runners',
  group: 'ci_registered_group_runners',
} as const;

/** Runners: registration, authentication by token, and what users may see and change of them. */
export class RunnersService {
  private readonly dataSource: DataSource;
  private readonly allowRegistrationToken: boolean;
  readonly lists: RunnerLists;

  constructor(
    core: CoreDeps,
    private readonly deps: { planLimits: PlanLimitsService },
  ) {
    this.dataSource = core.dataSource;
    this.allowRegistrationToken = core.config.allowRunnerRegistrationToken;
    this.lists = new RunnerLists(core.dataSource);
  }

  /** The runner a `glrt-` (or legacy) authentication token belongs to; null when unknown or expired. */
  async authenticate(token: string | undefined): Promise<Runner | null> {
    if (!token) return null;
    const runner = await this.dataSource.manager.findOneBy(Runner, { tokenDigest: hashToken(token) });
    if (!runner) return null;
    if (runner.tokenExpiresAt && runner.tokenExpiresAt.getTime() <= Date.now()) return null;
    return runner;
  }

  /**
   * Records that the runner was heard from: `contacted_at` now, its `info` (kept when none is given),
   * and the address it came from. Updates `runner` in place too.
   */
  async recordContact(runner: Runner, contact: RunnerContact = {}, manager?: EntityManager): Promise<void> {
    const info = contact.info && typeof contact.info === 'object' ? contact.info : null;
    const rows: Array<{ contacted_at: Date; info: Record<string, unknown>; ip_address: string | null }> =
      await (manager ?? this.dataSource.manager).query(
        `UPDATE ci_runners SET contacted_at = now(), info = COALESCE($2::jsonb, info),
           ip_address = COALESCE($3, ip_address)
         WHERE id = $1 RETURNING contacted_at, info, ip_address`,
        [runner.id, info === null ? null : JSON.stringify(info), contact.ip ?? null],
      );
    const row = rows[0];
    if (!row) return;
    runner.contactedAt = new Date(row.contacted_at);
    runner.info = row.info;
    runner.ipAddress = row.ip_address;
  }

  // ---- Creating and registering --------------------------------------------------------------------

  /** `POST /user/runners`: a runner the caller may create (Rule `runner_creator`). */
  async create(caller: Caller, params: RunnerCreate): Promise<IssuedRunner> {
    const scope = await this.creationScope(caller, params);
    try {
      return await this.insert(scope, params, {
        registrationType: 'authenticated_user',
        creatorId: caller.user?.id ?? null,
      });
    } catch (error) {
      if (error instanceof LimitExceeded)
        throw new ApiError(400, { message: `400 Bad request - ${error.message}` });
      throw error;
    }
  }

  private async creationScope(caller: Caller, params: RunnerCreate): Promise<Scope> {
    const manager = this.dataSource.manager;
    if (params.runner_type === 'instance_type') {
      if (!isAdmin(caller)) throw forbidden('Insufficient permissions');
      return { kind: 'instance' };
    }
    if (params.runner_type === 'group_type') {
      if (params.group_id === undefined) throw badParameter('group_id is missing');
      const subject = await groupSubjectOf(manager, caller, params.group_id);
      if (!subject) throw new ApiError(400, { message: '400 Bad request - Missing/invalid group' });
      if (!canGroup(caller, 'create_runners', subject)) throw forbidden('Insufficient permissions');
      return { kind: 'group', id: params.group_id };
    }
    if (params.project_id === undefined) throw badParameter('project_id is missing');
    const subject = (await projectSubjectOf(manager, caller, [params.project_id])).get(params.project_id);
    if (!subject) throw new ApiError(400, { message: '400 Bad request - Missing/invalid project' });
    if (!canProject(caller, 'create_runners', subject)) throw forbidden('Insufficient permissions');
    return { kind: 'project', id: params.project_id };
  }

  /** The legacy `POST /runners`: the registration token decides the runner's type and owner. */
  async register(
    token: string,
    params: RunnerSettings & { info?: Record<string, unknown> },
  ): Promise<IssuedRunner> {
    if (params.active !== undefined && params.paused !== undefined)
      throw badParameter('active, paused are mutually exclusive');
    const scope = this.allowRegistrationToken ? await this.registrationScope(token) : null;
    if (!scope) throw forbidden();
    try {
      return await this.insert(scope, params, {
        registrationType: 'registration_token',
        creatorId: null,
        info: params.info,
      });
    } catch (error) {
      if (error instanceof LimitExceeded)
        throw validationFailed({
          [`${scope.kind === 'group' ? 'runner_namespaces' : 'runner_projects'}.base`]: [error.message],
        });
      throw error;
    }
  }

  private async registrationScope(token: string): Promise<Scope | null> {
    const manager = this.dataSource.manager;
    const instance: Array<{ registration_token_digest: string | null }> = await manager.query(
      'SELECT registration_token_digest FROM ci_runner_instance_settings',
    );
    if (token && instance[0]?.registration_token_digest === hashToken(token)) return { kind: 'instance' };
    const projects: Array<{ id: number }> = await manager.query(
      'SELECT id FROM projects WHERE runners_token = $1 AND marked_for_deletion_at IS NULL LIMIT 1',
      [token],
    );
    if (projects[0]) return { kind: 'project', id: Number(projects[0].id) };
    const groups: Array<{ id: number }> = await manager.query(
      `SELECT id FROM namespaces WHERE settings ? 'runners_token' AND settings->>'runners_token' = $1
         AND kind = 'group' LIMIT 1`,
      [token],
    );
    return groups[0] ? { kind: 'group', id: Number(groups[0].id) } : null;
  }

  private async insert(
    scope: Scope,
    params: RunnerSettings,
    origin: {
      registrationType: Runner['registrationType'];
      creatorId: number | null;
      info?: Record<string, unknown>;
    },
  ): Promise<IssuedRunner> {
    const token = generateToken(RUNNER_TOKEN_PREFIX);
    const runner = await this.dataSource.transaction(async (tx) => {
      if (scope.kind !== 'instance') await this.checkLimit(tx, scope);
      const now = new Date();
      const record = tx.create(Runner, {
        runnerType:
          scope.kind === 'instance'
            ? 'instance_type'
            : scope.kind === 'group'
              ? 'group_type'
              : 'project_type',
        tokenDigest: hashToken(token),
        tokenExpiresAt: null,
        registrationType: origin.registrationType,
        creatorId: origin.creatorId,
        description: params.description ?? null,
        active: params.paused !== undefined ? !params.paused : (params.active ?? true),
        locked: params.locked ?? false,
        runUntagged: params.run_untagged ?? true,
        tagList: tagsOf(params.tag_list) ?? [],
        accessLevel: params.access_level ?? 'not_protected',
        maximumTimeout: params.maximum_timeout ?? null,
        maintenanceNote: params.maintenance_note ?? params.maintainer_note ?? null,
        info: origin.info && typeof origin.info === 'object' ? origin.info : {},
        ipAddress: null,
        contactedAt: null,
        createdAt: now,
        updatedAt: now,
      });
      const saved = await tx.save(record);
      if (scope.kind === 'project')
        await tx.insert(RunnerProject, { runnerId: saved.id, projectId: scope.id, createdAt: now });
      if (scope.kind === 'group')
        await tx.insert(RunnerNamespace, { runnerId: saved.id, namespaceId: scope.id });
      return saved;
    });
    return { runner, token };
  }

  /**
   * GitLab's `ci_registered_project_runners` / `ci_registered_group_runners`: the runners of the project
   * (group) created or contacted in the last 7 days, 0 meaning no limit. The owner row is locked so that
   * concurrent registrations count one another.
   */
  private async checkLimit(
    tx: EntityManager,
    scope: { kind: 'project' | 'group'; id: number },
  ): Promise<void> {
    const name = LIMIT_NAMES[scope.kind];
    const limit = (await this.deps.planLimits.current(tx))[name];
    if (!limit) return;
    const [table, link, column] =
      scope.kind === 'project'
        ? ['projects', 'ci_runner_projects', 'project_id']
        : ['namespaces', 'ci_runner_namespaces', 'namespace_id'];
    await tx.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [scope.id]);
    const rows: Array<{ count: string }> = await tx.query(
      `SELECT count(*) AS count FROM ${link} l JOIN ci_runners r ON r.id = l.runner_id
       WHERE l.${column} = $1
         AND (r.created_at >= now() - interval '7 days' OR r.contacted_at >= now() - interval '7 days')`,
      [scope.id],
    );
    if (Number(rows[0]?.count ?? 0) >= limit)
      throw new LimitExceeded(`Maximum number of ${name.replace(/_/g, ' ')} (${limit}) exceeded`);
  }

  // ---- The runner's own token ----------------------------------------------------------------------

  /** The runner of a token, or GitLab's 403 for the runner endpoints. */
  async runnerOfToken(token: string | undefined): Promise<Runner> {
    const runner = await this.authenticate(token);
    if (!runner) throw forbidden();
    return runner;
  }

  async unregister(token: string): Promise<void> {
    const runner = await this.runnerOfToken(token);
    await this.dataSource.manager.delete(Runner, { id: runner.id });
  }

  async resetToken(runner: Runner): Promise<{ token: string; token_expires_at: string | null }> {
    const token = generateToken(RUNNER_TOKEN_PREFIX);
    await this.dataSource.manager.update(
      Runner,
      { id: runner.id },
      { tokenDigest: hashToken(token), updatedAt: new Date() },
    );
    return { token, token_expires_at: runner.tokenExpiresAt?.toISOString() ?? null };
  }

  // ---- The users' runner API -----------------------------------------------------------------------

  /** A runner and what the caller may do to it; 404 when unknown, 403 without `need`. */
  async find(caller: Caller, id: number, need: keyof Omit<RunnerAccess, 'projectIds'>) {
    const runner = await this.dataSource.manager.findOneBy(Runner, { id });
    if (!runner) throw notFound('Runner');
    const access = await runnerAccess(this.dataSource.manager, caller, runner);
    // GitLab refuses a runner of several projects before it looks at who asks.
    if (need === 'delete' && !isAdmin(caller) && access.projectIds.length > 1)
      throw forbidden('Runner associated with more than one project');
    if (!access[need]) throw noAccess();
    return { runner, access };
  }

  /** The runner's projects and groups the caller belongs to, for its details. */
  relations(caller: Caller, runner: Runner, access: RunnerAccess, externalUrl: string) {
    return loadRelations(this.dataSource.manager, caller, runner, access, externalUrl);
  }

  /** The jobs the runner picked, in the projects the caller reads (see runner-jobs-list.ts). */
  jobs(caller: Caller, runnerId: number, params: RunnerJobParams, request: RequestInfo) {
    return listRunnerJobs(this.dataSource.manager, caller, runnerId, params, request);
  }

  async update(caller: Caller, id: number, params: RunnerSettings) {
    const { runner, access } = await this.find(caller, id, 'update');
    if (params.active !== undefined && params.paused !== undefined)
      throw badParameter('active, paused are mutually exclusive');
    const keys = [
      'description',
      'active',
      'paused',
      'tag_list',
      'run_untagged',
      'locked',
      'access_level',
      'maximum_timeout',
      'maintenance_note',
    ] as const;
    if (!keys.some((key) => params[key] !== undefined))
      throw badParameter(`${keys.join(', ')} are missing, at least one parameter must be provided`);
    const changes: Partial<Omit<Runner, 'info'>> = { updatedAt: new Date() };
    if (params.description !== undefined) changes.description = params.description;
    if (params.paused !== undefined) changes.active = !params.paused;
    if (params.active !== undefined) changes.active = params.active;
    if (params.tag_list !== undefined) changes.tagList = tagsOf(params.tag_list) ?? [];
    if (params.run_untagged !== undefined) changes.runUntagged = params.run_untagged;
    if (params.locked !== undefined) changes.locked = params.locked;
    if (params.access_level !== undefined) changes.accessLevel = params.access_level;
    if (params.maximum_timeout !== undefined) changes.maximumTimeout = params.maximum_timeout;
    if (params.maintenance_note !== undefined) changes.maintenanceNote = params.maintenance_note;
    await this.dataSource.manager.update(Runner, { id: runner.id }, changes);
    return { runner: Object.assign(runner, changes), access };
  }

  async remove(caller: Caller, id: number): Promise<void> {
    const { runner } = await this.find(caller, id, 'delete');
    await this.dataSource.manager.delete(Runner, { id: runner.id });
  }

  /** `POST /projects/:id/runners`: enables a project runner the caller may assign in the project. */
  async enable(caller: Caller, projectId: number, runnerId: number): Promise<Runner> {
    const runner = await this.dataSource.manager.findOneBy(Runner, { id: runnerId });
    if (!runner) throw notFound('Runner');
    if (runner.runnerType === 'group_type') throw forbidden('Runner is a group runner');
    if (!isAdmin(caller) && runner.locked) throw forbidden('Runner is locked');
    const access = await runnerAccess(this.dataSource.manager, caller, runner);
    if (!access.assign) throw noAccess();
    if (runner.runnerType !== 'project_type')
      throw new ApiError(400, { message: '400 Bad request - Runner is not a project runner' });
    if (access.projectIds.includes(projectId))
      throw new ApiError(400, { message: '400 Bad request - Runner has already been taken' });
    try {
      await this.dataSource.transaction(async (tx) => {
        await this.checkLimit(tx, { kind: 'project', id: projectId });
        await tx.insert(RunnerProject, { runnerId, projectId, createdAt: new Date() });
      });
    } catch (error) {
      if (error instanceof LimitExceeded)
        throw new ApiError(400, { message: `400 Bad request - ${error.message}` });
      throw error;
    }
    return runner;
  }

  /** `DELETE /projects/:id/runners/:runner_id`: never from the runner's owner project. */
  async disable(projectId: number, runnerId: number): Promise<void> {
    const owner: Array<{ project_id: number; is_here: boolean }> = await this.dataSource.manager.query(
      `SELECT project_id, EXISTS (SELECT 1 FROM ci_runner_projects WHERE runner_id = $1 AND project_id = $2) AS is_here
       FROM ci_runner_projects WHERE runner_id = $1 ORDER BY created_at, project_id LIMIT 1`,
      [runnerId, projectId],
    );
    if (!owner[0]?.is_here) throw notFound('Runner');
    if (Number(owner[0].project_id) === projectId)
      throw forbidden('You cannot unassign a runner from the owner project. Delete the runner instead');
    await this.dataSource.manager.delete(RunnerProject, { runnerId, projectId });
  }

  // ---- Registration tokens -------------------------------------------------------------------------

  async resetInstanceRegistrationToken(): Promise<{ token: string; token_expires_at: null }> {
    const token = newRunnersToken();
    await this.dataSource.manager.query(
      'UPDATE ci_runner_instance_settings SET registration_token_digest = $1, updated_at = now()',
      [hashToken(token)],
    );
    return { token, token_expires_at: null };
  }

  async resetProjectRegistrationToken(projectId: number): Promise<{ token: string; token_expires_at: null }> {
    const token = newRunnersToken();
    await this.dataSource.manager.query('UPDATE projects SET runners_token = $2 WHERE id = $1', [
      projectId,
      token,
    ]);
    return { token, token_expires_at: null };
  }

  async resetGroupRegistrationToken(groupId: number): Promise<{ token: string; token_expires_at: null }> {
    const token = newRunnersToken();
    await this.dataSource.manager.query(
      `UPDATE namespaces SET settings = jsonb_set(settings, '{runners_token}', to_jsonb($2::text)) WHERE id = $1`,
      [groupId, token],
    );
    return { token, token_expires_at: null };
  }
}

/** A plan limit reached: each caller words it as its endpoint does in GitLab. */
class LimitExceeded extends Error {}
