import type { DataSource, EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import { conflict, notFound, validationFailed } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { paginateOffset, type PageParams, type Page, type RequestInfo } from '../core/pagination.js';
import { isUniqueViolation } from '../db/errors.js';
import type { PlanLimitsService } from '../plan_limits/plan-limits.service.js';
import { SecretBox } from '../remote_mirrors/secret-box.js';
import {
  draftErrors,
  duplicateKeyError,
  hiddenUpdateErrors,
  normalizeKey,
  scopeMatches,
  scopeOrder,
  type Errors,
} from './ci-variable-rules.js';
import { CiVariable, type CiVariableType } from './ci-variable.entity.js';

type CreateInput = components['schemas']['CiVariableCreate'];
type UpdateInput = components['schemas']['CiVariableUpdate'];
type InstanceCreateInput = components['schemas']['CiInstanceVariableCreate'];
type InstanceUpdateInput = components['schemas']['CiInstanceVariableUpdate'];

/** Whose variables: the instance's, a group's (its namespace id) or a project's. */
export type VariableOwner =
  { level: 'instance' } | { level: 'group'; groupId: number } | { level: 'project'; projectId: number };

/** A variable as a pipeline receives it (its value opened). */
export interface PipelineVariable {
  key: string;
  value: string;
  variable_type: 'env_var' | 'file';
  raw: boolean;
  masked: boolean;
  protected: boolean;
  hidden: boolean;
}

/** A variable with its value opened, for the presenters. */
export interface OpenedVariable {
  variable: CiVariable;
  value: string;
}

const MULTIPLE =
  "There are multiple variables with provided parameters. Please use 'filter[environment_scope]'";
/** Orders creations of instance variables, so that two cannot both pass the plan limit. */
const INSTANCE_LOCK = 7_305_510_001;
const LEVEL_RANK = { instance: 0, group: 1, project: 2 } as const;

const ownerWhere = (owner: VariableOwner) =>
  owner.level === 'instance'
    ? { level: 'instance' as const }
    : owner.level === 'group'
      ? { level: 'group' as const, groupId: owner.groupId }
      : { level: 'project' as const, projectId: owner.projectId };

const failIf = (errors: Errors) => {
  if (Object.keys(errors).length) throw validationFailed(errors);
};

export class CiVariablesService {
  private readonly dataSource: DataSource;
  private readonly secrets: SecretBox;

  constructor(
    core: CoreDeps,
    private readonly deps: { planLimits: PlanLimitsService },
  ) {
    this.dataSource = core.dataSource;
    this.secrets = SecretBox.fromConfig(core.config);
  }

  /** The owner's variables by key, then scope. */
  async list(owner: VariableOwner, params: PageParams, request: RequestInfo): Promise<Page<OpenedVariable>> {
    const query = this.dataSource
      .getRepository(CiVariable)
      .createQueryBuilder('v')
      .where(ownerWhere(owner))
      .orderBy('v.key', 'ASC')
      .addOrderBy('v.environment_scope', 'ASC')
      .addOrderBy('v.id', 'ASC');
    const page = await paginateOffset(query, params, request);
    return { items: page.items.map((v) => this.opened(v)), headers: page.headers };
  }

  async get(owner: VariableOwner, key: string, scope?: string): Promise<OpenedVariable> {
    return this.opened(await this.find(this.dataSource.manager, owner, key, scope));
  }

  async create(owner: VariableOwner, input: CreateInput | InstanceCreateInput): Promise<OpenedVariable> {
    const key = normalizeKey(input.key);
    const hidden = owner.level !== 'instance' && (input as CreateInput).masked_and_hidden === true;
    const draft = {
      key,
      value: input.value,
      masked: hidden || input.masked === true,
      raw: input.raw === true,
      environmentScope: owner.level === 'instance' ? '*' : ((input as CreateInput).environment_scope ?? '*'),
      description: input.description ?? null,
      instance: owner.level === 'instance',
    };
    const errors = draftErrors(draft);
    try {
      return await this.dataSource.transaction(async (tx) => {
        if (!errors.key && (await this.taken(tx, owner, key, draft.environmentScope)))
          Object.assign(errors, { key: duplicateKeyError(key).key });
        if (owner.level === 'instance') await this.instanceLimit(tx, errors);
        failIf(errors);
        const variables = tx.getRepository(CiVariable);
        const { identifiers } = await variables.insert({
          ...ownerWhere(owner),
          key,
          encryptedValue: this.secrets.seal(draft.value),
          variableType: (input.variable_type ?? 'env_var') as CiVariableType,
          protected: input.protected === true,
          masked: draft.masked,
          hidden,
          raw: draft.raw,
          environmentScope: draft.environmentScope,
          description: draft.description,
        });
        return this.opened(await variables.findOneByOrFail({ id: identifiers[0].id as number }));
      });
    } catch (err) {
      // Another request created the same key meanwhile.
      if (isUniqueViolation(err)) throw validationFailed(duplicateKeyError(key));
      throw err;
    }
  }

  async update(
    owner: VariableOwner,
    key: string,
    scope: string | undefined,
    input: UpdateInput | InstanceUpdateInput,
  ): Promise<OpenedVariable> {
    try {
      return await this.dataSource.transaction(async (tx) => {
        const variable = await this.find(tx, owner, key, scope, true);
        const value = input.value ?? this.secrets.open(variable.encryptedValue);
        const masked = input.masked ?? variable.masked;
        const environmentScope =
          owner.level === 'instance'
            ? '*'
            : ((input as UpdateInput).environment_scope ?? variable.environmentScope);
        const description = input.description === undefined ? variable.description : input.description;
        const raw = input.raw ?? variable.raw;
        failIf(hiddenUpdateErrors(variable.hidden, variable.masked, masked));
        const errors = draftErrors({
          key: variable.key,
          value,
          masked,
          raw,
          environmentScope,
          description,
          instance: owner.level === 'instance',
        });
        if (
          environmentScope !== variable.environmentScope &&
          (await this.taken(tx, owner, variable.key, environmentScope))
        )
          Object.assign(errors, { key: duplicateKeyError(variable.key).key });
        failIf(errors);
        Object.assign(variable, {
          encryptedValue: input.value === undefined ? variable.encryptedValue : this.secrets.seal(value),
          variableType: (input.variable_type ?? variable.variableType) as CiVariableType,
          protected: input.protected ?? variable.protected,
          masked,
          raw,
          environmentScope,
          description,
        });
        await tx.getRepository(CiVariable).save(variable);
        return { variable, value };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw validationFailed(duplicateKeyError(key));
      throw err;
    }
  }

  async remove(owner: VariableOwner, key: string, scope?: string): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const variable = await this.find(tx, owner, key, scope, true);
      await tx.getRepository(CiVariable).delete({ id: variable.id });
    });
  }

  /**
   * The variables a pipeline of the project receives, in the order they apply (a later one overrides
   * an earlier one of the same key; the caller folds): the instance's, then each group's above the
   * project from the outermost in, then the project's. Protected ones only when `protectedRef`;
   * environment-scoped ones only when `environment` matches (`*` wildcards; without an environment only
   * `*`), a more specific scope after a wider one. One query.
   */
  async forPipeline(
    params: { projectId: number; protectedRef: boolean; environment?: string | null },
    manager: EntityManager = this.dataSource.manager,
  ): Promise<PipelineVariable[]> {
    const rows: Array<{
      key: string;
      encrypted_value: string;
      variable_type: 'env_var' | 'file';
      raw: boolean;
      masked: boolean;
      protected: boolean;
      hidden: boolean;
      environment_scope: string;
      level: keyof typeof LEVEL_RANK;
      depth: number;
      id: number;
    }> = await manager.query(
      `WITH t AS (SELECT n.traversal_ids AS ids FROM projects p
                  JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = $1)
       SELECT v.id, v.level, v.key, v.encrypted_value, v.variable_type, v.raw, v.masked, v.protected,
              v.hidden, v.environment_scope,
              COALESCE(array_position((SELECT ids FROM t), v.group_id), 0) AS depth
       FROM ci_variables v
       WHERE (v.level = 'instance'
              OR (v.level = 'group' AND v.group_id = ANY(COALESCE((SELECT ids FROM t), '{}')))
              OR (v.level = 'project' AND v.project_id = $1))
         AND ($2::boolean OR NOT v.protected)`,
      [params.projectId, params.protectedRef],
    );
    return rows
      .filter((row) => scopeMatches(row.environment_scope, params.environment))
      .sort(
        (a, b) =>
          LEVEL_RANK[a.level] - LEVEL_RANK[b.level] ||
          Number(a.depth) - Number(b.depth) ||
          scopeOrder(a.environment_scope, b.environment_scope) ||
          a.id - b.id,
      )
      .map((row) => ({
        key: row.key,
        value: this.secrets.open(row.encrypted_value),
        variable_type: row.variable_type,
        raw: row.raw,
        masked: row.masked,
        protected: row.protected,
        hidden: row.hidden,
      }));
  }

  private opened(variable: CiVariable): OpenedVariable {
    return { variable, value: this.secrets.open(variable.encryptedValue) };
  }

  /** The one variable of the key (in `scope` when given): 404 without one, 409 with several. */
  private async find(
    manager: EntityManager,
    owner: VariableOwner,
    key: string,
    scope: string | undefined,
    lock = false,
  ): Promise<CiVariable> {
    const where = {
      ...ownerWhere(owner),
      key,
      ...(scope !== undefined && owner.level !== 'instance' ? { environmentScope: scope } : {}),
    };
    const found = await manager.getRepository(CiVariable).find({
      where,
      take: 2,
      order: { id: 'ASC' },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (found.length === 0) throw notFound('Variable');
    if (found.length > 1) throw conflict(MULTIPLE);
    return found[0];
  }

  private taken(manager: EntityManager, owner: VariableOwner, key: string, scope: string) {
    const where = {
      ...ownerWhere(owner),
      key,
      ...(owner.level === 'instance' ? {} : { environmentScope: scope }),
    };
    return manager.getRepository(CiVariable).existsBy(where);
  }

  /** Ci::InstanceVariable's plan limit: as many as `ci_instance_level_variables` allows (0: no limit). */
  private async instanceLimit(tx: EntityManager, errors: Errors) {
    await tx.query(`SELECT pg_advisory_xact_lock(${INSTANCE_LOCK})`);
    const limit = (await this.deps.planLimits.current(tx)).ci_instance_level_variables;
    if (limit <= 0) return;
    const count = await tx.getRepository(CiVariable).countBy({ level: 'instance' });
    if (count >= limit)
      (errors.base ??= []).push(`Maximum number of ci instance level variables (${limit}) exceeded`);
  }
}
