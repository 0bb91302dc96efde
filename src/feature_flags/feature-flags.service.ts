import { In, type DataSource, type EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import { generateToken } from '../core/auth.js';
import { ApiError, badParameter, recordNotFound } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { recordId } from '../core/ids.js';
import { paginateOffset, type PageParams, type RequestInfo } from '../core/pagination.js';
import { isUniqueViolation } from '../db/errors.js';
import { nextInternalId } from '../db/internal-ids.js';
import type { ProjectView } from '../projects/projects.service.js';
import {
  FeatureFlag,
  FeatureFlagScope,
  FeatureFlagStrategy,
  FeatureFlagsClient,
  FeatureFlagUserList,
} from './feature-flag.entity.js';
import { scopeMatches, strategyErrors } from './strategy-rules.js';

type FlagCreate = components['schemas']['FeatureFlagCreate'];
type FlagUpdate = components['schemas']['FeatureFlagUpdate'];
type StrategyInput = components['schemas']['StrategyInput'];
type ScopeInput = components['schemas']['ScopeInput'];

/** Flags with their strategies, the strategies' scopes and the user lists they use, loaded in batches. */
export interface FlagRecords {
  flags: FeatureFlag[];
  strategies: Map<number, FeatureFlagStrategy[]>;
  scopes: Map<number, FeatureFlagScope[]>;
  userLists: Map<number, FeatureFlagUserList>;
}

export const INSTANCE_ID_PREFIX = 'glffct-';
const NAME = /^[a-z]([-_a-z0-9]*[a-z0-9])?$/;
const NAME_FORMAT =
  "Name can contain only lowercase letters, digits, '_' and '-'. Must start with a letter, and cannot end with '-' or '_'";
const invalid = (...messages: string[]) => new ApiError(400, { message: messages });

function group<T>(items: T[], key: (item: T) => number): Map<number, T[]> {
  const map = new Map<number, T[]>();
  for (const item of items) map.set(key(item), [...(map.get(key(item)) ?? []), item]);
  return map;
}

/** `parameters` as an object, also when python-gitlab sends it as a JSON string. */
function parameters(value: StrategyInput['parameters']): Record<string, string> | undefined {
  if (value === undefined || typeof value === 'object') return value as Record<string, string> | undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, string>;
  } catch {
    // answered below
  }
  throw badParameter('strategies[parameters] is invalid');
}

/** An Unleash client, authenticated by its project's instance id. */
export interface UnleashClient {
  projectId: number;
}

export class FeatureFlagsService {
  private readonly dataSource: DataSource;

  constructor(core: CoreDeps) {
    this.dataSource = core.dataSource;
  }

  async list(
    view: ProjectView,
    params: PageParams & { scope?: 'enabled' | 'disabled' },
    request: RequestInfo,
  ): Promise<FlagRecords & { headers: Record<string, string> }> {
    const query = this.dataSource
      .getRepository(FeatureFlag)
      .createQueryBuilder('f')
      .where('f.project_id = :projectId', { projectId: view.project.id })
      .orderBy('f.name', 'ASC');
    if (params.scope) query.andWhere('f.active = :active', { active: params.scope === 'enabled' });
    const page = await paginateOffset(query, params, request);
    return { ...(await this.records(page.items)), headers: page.headers };
  }

  async get(view: ProjectView, name: string): Promise<FlagRecords> {
    return this.records([await this.find(this.dataSource.manager, view, name)]);
  }

  async create(view: ProjectView, input: FlagCreate): Promise<FlagRecords> {
    this.checkFlag(input);
    const flag = await this.dataSource
      .transaction(async (tx) => {
        const now = new Date();
        const inserted = await tx.getRepository(FeatureFlag).insert({
          projectId: view.project.id,
          iid: await nextInternalId(tx, view.project.id, 'operations_feature_flags'),
          name: input.name,
          description: input.description ?? null,
          active: input.active ?? true,
          createdAt: now,
          updatedAt: now,
        });
        const id = inserted.identifiers[0].id as number;
        await this.applyStrategies(tx, view, id, input.strategies ?? []);
        return tx.getRepository(FeatureFlag).findOneByOrFail({ id });
      })
      .catch(translate);
    return this.records([flag]);
  }

  async update(view: ProjectView, name: string, input: FlagUpdate): Promise<FlagRecords> {
    this.checkFlag(input);
    const flag = await this.dataSource
      .transaction(async (tx) => {
        const flag = await this.find(tx, view, name, true);
        const changes: Partial<FeatureFlag> = { updatedAt: new Date() };
        if (input.name !== undefined) changes.name = input.name;
        if (input.description !== undefined) changes.description = input.description;
        if (input.active !== undefined) changes.active = input.active;
        await tx.getRepository(FeatureFlag).update(flag.id, changes);
        await this.applyStrategies(tx, view, flag.id, input.strategies ?? []);
        return tx.getRepository(FeatureFlag).findOneByOrFail({ id: flag.id });
      })
      .catch(translate);
    return this.records([flag]);
  }

  /** The deleted flag, as GitLab answers; its strategies and scopes go with it. */
  async remove(view: ProjectView, name: string): Promise<FlagRecords> {
    const records = await this.get(view, name);
    await this.dataSource.getRepository(FeatureFlag).delete(records.flags[0].id);
    return records;
  }

  /** The project's Unleash client, made on first use (concurrent first uses agree on one). */
  async client(view: ProjectView): Promise<FeatureFlagsClient> {
    await this.dataSource.query(
      'INSERT INTO feature_flags_clients (project_id, token) VALUES ($1, $2) ON CONFLICT (project_id) DO NOTHING',
      [view.project.id, generateToken(INSTANCE_ID_PREFIX)],
    );
    return this.dataSource.getRepository(FeatureFlagsClient).findOneByOrFail({ projectId: view.project.id });
  }

  /** The Unleash client of the project named by id or full path, if this is its instance id. */
  async unleashClient(instanceId: string, ref: string): Promise<UnleashClient | null> {
    const id = recordId(ref);
    const rows: Array<{ id: number }> = await this.dataSource.query(
      `SELECT p.id FROM projects p
         JOIN namespaces n ON n.id = p.namespace_id
         JOIN feature_flags_clients c ON c.project_id = p.id
       WHERE c.token = $1 AND ${id === undefined ? "lower(n.full_path || '/' || p.path) = lower($2)" : 'p.id = $2'}`,
      [instanceId, id ?? ref],
    );
    return rows.length === 1 ? { projectId: rows[0].id } : null;
  }

  /**
   * The flags an Unleash client sees in `environment`: those with a strategy scoped to it, with only those
   * strategies. No environment, no flags (GitLab's answer).
   */
  async unleashFeatures(client: UnleashClient, environment?: string): Promise<FlagRecords> {
    const { projectId } = client;
    if (!environment) return this.records([]);
    const flags = await this.dataSource
      .getRepository(FeatureFlag)
      .find({ where: { projectId }, order: { id: 'ASC' } });
    const records = await this.records(flags);
    for (const [flagId, strategies] of records.strategies)
      records.strategies.set(
        flagId,
        strategies.filter((s) =>
          (records.scopes.get(s.id) ?? []).some((scope) => scopeMatches(scope.environmentScope, environment)),
        ),
      );
    records.flags = records.flags.filter((flag) => (records.strategies.get(flag.id) ?? []).length > 0);
    return records;
  }

  private checkFlag(input: { name?: string; description?: string }) {
    const { name, description } = input;
    const errors: string[] = [];
    if (name !== undefined) {
      if (name.length < 2) errors.push('Name is too short (minimum is 2 characters)');
      if (name.length > 63) errors.push('Name is too long (maximum is 63 characters)');
      if (!NAME.test(name)) errors.push(NAME_FORMAT);
    }
    if (description !== undefined && description.length > 255)
      errors.push('Description is too long (maximum is 255 characters)');
    if (errors.length) throw invalid(...errors);
  }

  private async find(manager: EntityManager, view: ProjectView, name: string, lock = false) {
    const query = manager
      .getRepository(FeatureFlag)
      .createQueryBuilder('f')
      .where('f.project_id = :projectId AND f.name = :name', { projectId: view.project.id, name });
    if (lock) query.setLock('pessimistic_write');
    const flag = await query.getOne();
    if (!flag) throw recordNotFound();
    return flag;
  }

  /**
   * GitLab's nested attributes: items with `id` change or (`_destroy`) remove the flag's strategy or
   * scope, items without add one. Then every strategy of the flag must be valid.
   */
  private async applyStrategies(
    tx: EntityManager,
    view: ProjectView,
    flagId: number,
    inputs: StrategyInput[],
  ) {
    const strategies = tx.getRepository(FeatureFlagStrategy);
    const listIds = inputs.flatMap((s) => (s.user_list_id === undefined ? [] : [s.user_list_id]));
    if (listIds.length) {
      const owned = await tx
        .getRepository(FeatureFlagUserList)
        .countBy({ id: In([...new Set(listIds)]), projectId: view.project.id });
      if (owned !== new Set(listIds).size)
        throw invalid('Strategies user list must belong to the same project');
    }
    for (const input of inputs) {
      const params = parameters(input.parameters);
      if (input.id !== undefined) {
        const strategy = await strategies.findOneBy({ id: input.id, featureFlagId: flagId });
        if (!strategy) throw recordNotFound();
        if (input._destroy) {
          await strategies.delete(strategy.id);
          continue;
        }
        const changes: Partial<FeatureFlagStrategy> = {};
        if (input.name !== undefined) changes.name = input.name;
        if (params !== undefined) changes.parameters = params;
        if (input.user_list_id !== undefined) changes.userListId = input.user_list_id;
        if (Object.keys(changes).length) await strategies.update(strategy.id, changes);
        await this.applyScopes(tx, strategy.id, input.scopes ?? []);
      } else if (!input._destroy) {
        const inserted = await strategies.insert({
          featureFlagId: flagId,
          name: input.name ?? '',
          parameters: params ?? {},
          userListId: input.user_list_id ?? null,
        });
        await this.applyScopes(tx, inserted.identifiers[0].id as number, input.scopes ?? [], true);
      }
    }
    const errors = (await strategies.findBy({ featureFlagId: flagId })).flatMap((s) => strategyErrors(s));
    if (errors.length) throw invalid(...new Set(errors));
  }

  private async applyScopes(tx: EntityManager, strategyId: number, inputs: ScopeInput[], fresh = false) {
    const scopes = tx.getRepository(FeatureFlagScope);
    for (const input of inputs) {
      if (input.id !== undefined) {
        const scope = fresh ? null : await scopes.findOneBy({ id: input.id, strategyId });
        if (!scope) throw recordNotFound();
        if (input._destroy) await scopes.delete(scope.id);
        else if (input.environment_scope !== undefined)
          await scopes.update(scope.id, { environmentScope: input.environment_scope });
      } else if (!input._destroy) {
        if (!input.environment_scope) throw invalid("Strategies scopes environment scope can't be blank");
        await scopes.insert({ strategyId, environmentScope: input.environment_scope });
      }
    }
  }

  private async records(flags: FeatureFlag[]): Promise<FlagRecords> {
    const strategies = flags.length
      ? await this.dataSource
          .getRepository(FeatureFlagStrategy)
          .find({ where: { featureFlagId: In(flags.map((f) => f.id)) }, order: { id: 'ASC' } })
      : [];
    const scopes = strategies.length
      ? await this.dataSource
          .getRepository(FeatureFlagScope)
          .find({ where: { strategyId: In(strategies.map((s) => s.id)) }, order: { id: 'ASC' } })
      : [];
    const listIds = [...new Set(strategies.flatMap((s) => (s.userListId === null ? [] : [s.userListId])))];
    const lists = listIds.length
      ? await this.dataSource.getRepository(FeatureFlagUserList).findBy({ id: In(listIds) })
      : [];
    return {
      flags,
      strategies: group(strategies, (s) => s.featureFlagId),
      scopes: group(scopes, (s) => s.strategyId),
      userLists: new Map(lists.map((list) => [list.id, list])),
    };
  }
}

function translate(err: unknown): never {
  if (isUniqueViolation(err)) {
    const driver = err.driverError as { constraint?: string; message?: string };
    throw invalid(
      `${driver.constraint ?? ''} ${driver.message ?? ''}`.includes('feature_flag_scopes')
        ? 'Strategies scopes environment scope has already been taken'
        : 'Name has already been taken',
    );
  }
  throw err;
}
