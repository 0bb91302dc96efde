import { In, type DataSource, type EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { forbidden, notFound, validationFailed } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import type { Logger } from '../logger.js';
import { Pipeline } from '../pipelines/pipeline.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { isUniqueViolation } from '../db/errors.js';
import { SecretBox } from '../remote_mirrors/secret-box.js';
import { User } from '../users/user.entity.js';
import { canAdminSchedule, canUpdateSchedule } from './abilities.js';
import {
  PipelineSchedule,
  PipelineScheduleVariable,
  type ScheduleVariableType,
} from './pipeline-schedule.entity.js';
import { INVALID_SYNTAX, nextRunAt, validCron, validTimezone } from './schedule-timing.js';

type CreateInput = components['schemas']['PipelineScheduleCreate'];
type UpdateInput = components['schemas']['PipelineScheduleUpdate'];
type VariableInput = { key: string; value?: string; variable_type?: ScheduleVariableType };

declare module '../core/events.js' {
  interface EventCatalog {
    /**
     * A schedule's run: `at` is the `next_run_at` it was enqueued for (a later edit makes it stale), or
     * null for a run asked for by `play`, as `userId`.
     */
    'pipeline_schedule.run': { scheduleId: number; at: string | null; userId?: number };
  }
}

/** A schedule with what its representation shows besides itself. */
export interface ScheduleRecord {
  schedule: PipelineSchedule;
  owner: User | null;
  /** The latest pipeline the schedule started (details only). */
  lastPipeline?: Pipeline | null;
  variables?: Array<{ variable: PipelineScheduleVariable; value: string }>;
}

const KEY_FORMAT = /^[a-zA-Z0-9_]+$/;

export class PipelineSchedulesService {
  private readonly dataSource: DataSource;
  private readonly events: Events;
  private readonly secrets: SecretBox;
  private readonly logger: Logger;

  constructor(
    core: CoreDeps,
    private readonly deps: Pick<ServiceRegistry, 'planLimits' | 'projects' | 'pipelines'>,
  ) {
    this.dataSource = core.dataSource;
    this.events = core.events;
    this.secrets = SecretBox.fromConfig(core.config);
    this.logger = core.logger;
  }

  async list(
    view: ProjectView,
    params: PageParams & { scope?: 'active' | 'inactive' },
    request: RequestInfo,
  ): Promise<Page<ScheduleRecord>> {
    const query = this.dataSource
      .getRepository(PipelineSchedule)
      .createQueryBuilder('s')
      .where('s.project_id = :projectId', { projectId: view.project.id })
      .orderBy('s.id', 'ASC');
    if (params.scope) query.andWhere('s.active = :active', { active: params.scope === 'active' });
    const page = await paginateOffset(query, params, request);
    return { ...page, items: await this.records(page.items, false) };
  }

  /** One schedule; its variables only for whoever may manage it (`read_pipeline_schedule_variables`). */
  async get(caller: Caller, view: ProjectView, scheduleId: number): Promise<ScheduleRecord> {
    const schedule = await this.find(view, scheduleId);
    const withVariables = canAdminSchedule(caller, view.accessLevel, schedule.ownerId);
    const [record] = await this.records([schedule], withVariables);
    const lastPipeline = await this.dataSource
      .getRepository(Pipeline)
      .findOne({ where: { projectId: view.project.id, scheduleId: schedule.id }, order: { id: 'DESC' } });
    return { ...record, lastPipeline };
  }

  /** Creates the schedule and enqueues its first run, in one transaction, within the plan's limit. */
  async create(caller: Caller, view: ProjectView, input: CreateInput): Promise<ScheduleRecord> {
    const timing = this.timing(input.cron, input.cron_timezone ?? 'UTC');
    if (!input.description) throw validationFailed({ description: ["can't be blank"] });
    const id = await this.dataSource.transaction(async (tx) => {
      // The project's row serialises concurrent creations against the limit.
      await tx.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [view.project.id]);
      const limit = Number((await this.deps.planLimits.current(tx)).ci_pipeline_schedules);
      const count = await tx.getRepository(PipelineSchedule).countBy({ projectId: view.project.id });
      if (limit > 0 && count >= limit)
        throw validationFailed({ base: [`Maximum number of ci pipeline schedules (${limit}) exceeded`] });
      const now = new Date();
      const active = input.active ?? true;
      const { identifiers } = await tx.getRepository(PipelineSchedule).insert({
        projectId: view.project.id,
        ownerId: caller.user!.id,
        description: input.description,
        ref: input.ref,
        cron: timing.cron,
        cronTimezone: timing.timezone,
        nextRunAt: active ? nextRunAt(timing.cron, timing.timezone) : null,
        active,
        createdAt: now,
        updatedAt: now,
      });
      const schedule = await tx
        .getRepository(PipelineSchedule)
        .findOneByOrFail({ id: identifiers[0].id as number });
      await this.enqueueNext(tx, schedule);
      return schedule.id;
    });
    return this.get(caller, view, id);
  }

  /** Only the owner (or an administrator) edits; the run is rescheduled in the same transaction. */
  async update(
    caller: Caller,
    view: ProjectView,
    scheduleId: number,
    input: UpdateInput,
  ): Promise<ScheduleRecord> {
    const schedule = await this.find(view, scheduleId);
    if (!canUpdateSchedule(caller, view.accessLevel, schedule.ownerId)) throw forbidden();
    if (input.description === '') throw validationFailed({ description: ["can't be blank"] });
    const timing = this.timing(input.cron ?? schedule.cron, input.cron_timezone ?? schedule.cronTimezone);
    const active = input.active ?? schedule.active;
    await this.dataSource.transaction(async (tx) => {
      await tx.getRepository(PipelineSchedule).update(schedule.id, {
        description: input.description ?? schedule.description,
        ref: input.ref ?? schedule.ref,
        cron: timing.cron,
        cronTimezone: timing.timezone,
        active,
        nextRunAt: active ? nextRunAt(timing.cron, timing.timezone) : null,
        updatedAt: new Date(),
      });
      await this.enqueueNext(
        tx,
        await tx.getRepository(PipelineSchedule).findOneByOrFail({ id: schedule.id }),
      );
    });
    return this.get(caller, view, schedule.id);
  }

  async remove(caller: Caller, view: ProjectView, scheduleId: number): Promise<void> {
    const schedule = await this.find(view, scheduleId);
    this.requireAdmin(caller, view, schedule);
    await this.dataSource.getRepository(PipelineSchedule).delete(schedule.id);
  }

  /** 201 when the caller became the owner, 200 when they already were. */
  async takeOwnership(
    caller: Caller,
    view: ProjectView,
    scheduleId: number,
  ): Promise<{ record: ScheduleRecord; changed: boolean }> {
    const schedule = await this.find(view, scheduleId);
    this.requireAdmin(caller, view, schedule);
    const changed = schedule.ownerId !== caller.user!.id;
    if (changed)
      await this.dataSource
        .getRepository(PipelineSchedule)
        .update(schedule.id, { ownerId: caller.user!.id, updatedAt: new Date() });
    return { record: await this.get(caller, view, schedule.id), changed };
  }

  /** Runs the schedule now, as the caller, from the queue; the next scheduled run stays as it was. */
  async play(caller: Caller, view: ProjectView, scheduleId: number): Promise<void> {
    const schedule = await this.find(view, scheduleId);
    await this.dataSource.transaction((tx) =>
      this.events.publish(tx, 'pipeline_schedule.run', {
        scheduleId: schedule.id,
        at: null,
        userId: caller.user!.id,
      }),
    );
  }

  /** The pipelines the schedule started, by id. */
  async pipelines(
    view: ProjectView,
    scheduleId: number,
    params: PageParams & { sort?: 'asc' | 'desc' },
    request: RequestInfo,
  ): Promise<Page<Pipeline>> {
    const schedule = await this.find(view, scheduleId);
    const query = this.dataSource
      .getRepository(Pipeline)
      .createQueryBuilder('p')
      .where('p.project_id = :projectId AND p.schedule_id = :scheduleId', {
        projectId: view.project.id,
        scheduleId: schedule.id,
      })
      .orderBy('p.id', params.sort === 'desc' ? 'DESC' : 'ASC');
    return paginateOffset(query, params, request);
  }

  /**
   * A run from the queue. A scheduled run (`at`: the `next_run_at` it was enqueued for) first moves the
   * schedule to its next time and enqueues that run, in one transaction that only one run can win, so a
   * run repeated by the queue, or made stale by an edit, a deactivation or a deletion, does nothing. It
   * then creates the pipeline as the owner; a `play` (`at` null) as whoever asked, the next run untouched.
   */
  async run(scheduleId: number, at: string | null, userId?: number): Promise<void> {
    const schedule = await this.dataSource.getRepository(PipelineSchedule).findOneBy({ id: scheduleId });
    if (!schedule) return;
    if (at !== null && !(await this.advance(schedule, at))) return;
    const runAs = at === null ? (userId ?? null) : schedule.ownerId;
    const user = runAs === null ? null : await this.dataSource.getRepository(User).findOneBy({ id: runAs });
    if (!user || user.state !== 'active') return;
    let view: ProjectView;
    try {
      view = await this.deps.projects.find({ user, token: null }, schedule.projectId);
    } catch (err) {
      if (err instanceof Error && 'status' in err && err.status === 404) return;
      throw err;
    }
    const result = await this.deps.pipelines.create({
      project: view,
      ref: schedule.ref.replace(/^refs\/(heads|tags)\//, ''),
      user,
      source: 'schedule',
      scheduleId: schedule.id,
      variables: await this.variablesOf(schedule.id),
    });
    if ('errors' in result)
      this.logger.info({ scheduleId, errors: result.errors }, 'pipeline schedule created no pipeline');
  }

  /** Moves an active schedule from `at` to its next time and enqueues that run; false if another run did. */
  private async advance(schedule: PipelineSchedule, at: string): Promise<boolean> {
    if (!schedule.active || schedule.nextRunAt?.toISOString() !== at) return false;
    const from = new Date(Math.max(Date.now(), Date.parse(at)));
    return this.dataSource.transaction(async (tx) => {
      const { affected } = await tx
        .getRepository(PipelineSchedule)
        .update(
          { id: schedule.id, nextRunAt: schedule.nextRunAt!, active: true },
          { nextRunAt: nextRunAt(schedule.cron, schedule.cronTimezone, from) },
        );
      if (!affected) return false;
      await this.enqueueNext(
        tx,
        await tx.getRepository(PipelineSchedule).findOneByOrFail({ id: schedule.id }),
      );
      return true;
    });
  }

  // ---- Variables --------------------------------------------------------------------------------------

  async getVariable(caller: Caller, view: ProjectView, scheduleId: number, key: string) {
    const schedule = await this.find(view, scheduleId);
    this.requireAdmin(caller, view, schedule);
    return this.variableRecord(await this.findVariable(schedule, key));
  }

  async createVariable(caller: Caller, view: ProjectView, scheduleId: number, input: VariableInput) {
    const schedule = await this.find(view, scheduleId);
    if (!canUpdateSchedule(caller, view.accessLevel, schedule.ownerId)) throw forbidden();
    if (input.key.length > 255 || !KEY_FORMAT.test(input.key))
      throw validationFailed({ key: ["can contain only letters, digits and '_'."] });
    const variables = this.dataSource.getRepository(PipelineScheduleVariable);
    const now = new Date();
    try {
      const { identifiers } = await variables.insert({
        scheduleId: schedule.id,
        key: input.key,
        valueEncrypted: this.secrets.seal(input.value ?? ''),
        variableType: input.variable_type ?? 'env_var',
        createdAt: now,
        updatedAt: now,
      });
      return this.variableRecord(await variables.findOneByOrFail({ id: identifiers[0].id as number }));
    } catch (err) {
      if (isUniqueViolation(err)) throw validationFailed({ key: [`(${input.key}) has already been taken`] });
      throw err;
    }
  }

  async updateVariable(caller: Caller, view: ProjectView, scheduleId: number, input: VariableInput) {
    const schedule = await this.find(view, scheduleId);
    if (!canUpdateSchedule(caller, view.accessLevel, schedule.ownerId)) throw forbidden();
    const variable = await this.findVariable(schedule, input.key);
    const changes: Partial<PipelineScheduleVariable> = { updatedAt: new Date() };
    if (input.value !== undefined) changes.valueEncrypted = this.secrets.seal(input.value);
    if (input.variable_type !== undefined) changes.variableType = input.variable_type;
    await this.dataSource.getRepository(PipelineScheduleVariable).update(variable.id, changes);
    return this.variableRecord(await this.findVariable(schedule, input.key));
  }

  async deleteVariable(caller: Caller, view: ProjectView, scheduleId: number, key: string) {
    const schedule = await this.find(view, scheduleId);
    this.requireAdmin(caller, view, schedule);
    const variable = await this.findVariable(schedule, key);
    await this.dataSource.getRepository(PipelineScheduleVariable).delete(variable.id);
    return this.variableRecord(variable);
  }

  /** The schedule's variables, opened, for the pipelines it starts. */
  async variablesOf(scheduleId: number, manager: EntityManager = this.dataSource.manager) {
    const rows = await manager
      .getRepository(PipelineScheduleVariable)
      .find({ where: { scheduleId }, order: { id: 'ASC' } });
    return rows.map((row) => ({
      key: row.key,
      value: this.secrets.open(row.valueEncrypted),
      variable_type: row.variableType,
    }));
  }

  // ---- Helpers ----------------------------------------------------------------------------------------

  /** Enqueues the schedule's next run at its `next_run_at`, if it is active. */
  async enqueueNext(tx: EntityManager, schedule: PipelineSchedule): Promise<void> {
    if (!schedule.active || !schedule.nextRunAt) return;
    await this.events.publish(
      tx,
      'pipeline_schedule.run',
      { scheduleId: schedule.id, at: schedule.nextRunAt.toISOString() },
      { startAfter: schedule.nextRunAt },
    );
  }

  async find(view: ProjectView, scheduleId: number): Promise<PipelineSchedule> {
    const schedule = await this.dataSource
      .getRepository(PipelineSchedule)
      .findOneBy({ id: scheduleId, projectId: view.project.id });
    if (!schedule) throw notFound('Pipeline Schedule');
    return schedule;
  }

  private requireAdmin(caller: Caller, view: ProjectView, schedule: PipelineSchedule) {
    if (!canAdminSchedule(caller, view.accessLevel, schedule.ownerId)) throw forbidden();
  }

  private async findVariable(schedule: PipelineSchedule, key: string) {
    const variable = await this.dataSource
      .getRepository(PipelineScheduleVariable)
      .findOneBy({ scheduleId: schedule.id, key });
    if (!variable) throw notFound('Pipeline Schedule Variable');
    return variable;
  }

  private variableRecord(variable: PipelineScheduleVariable) {
    return { variable, value: this.secrets.open(variable.valueEncrypted) };
  }

  /** The cron and time zone, checked as GitLab checks them (the cron first). */
  private timing(cron: string, timezone: string) {
    if (!validCron(cron)) throw validationFailed({ cron: [INVALID_SYNTAX] });
    if (!validTimezone(timezone)) throw validationFailed({ cron_timezone: [INVALID_SYNTAX] });
    return { cron: cron.trim(), timezone };
  }

  async records(schedules: PipelineSchedule[], withVariables: boolean): Promise<ScheduleRecord[]> {
    const ownerIds = [...new Set(schedules.map((s) => s.ownerId).filter((id): id is number => id !== null))];
    const owners = ownerIds.length
      ? await this.dataSource.getRepository(User).findBy({ id: In(ownerIds) })
      : [];
    const byId = new Map(owners.map((user) => [user.id, user]));
    return Promise.all(
      schedules.map(async (schedule) => ({
        schedule,
        owner: schedule.ownerId === null ? null : (byId.get(schedule.ownerId) ?? null),
        variables: withVariables
          ? (
              await this.dataSource
                .getRepository(PipelineScheduleVariable)
                .find({ where: { scheduleId: schedule.id }, order: { id: 'ASC' } })
            ).map((variable) => this.variableRecord(variable))
          : undefined,
      })),
    );
  }
}
