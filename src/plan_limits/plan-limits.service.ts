import type { DataSource, EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import { notFound } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { PLAN_LIMIT_NAMES, type PlanLimitName, type PlanLimits } from './plan-limit-names.js';

export type { PlanLimits } from './plan-limit-names.js';
type PlanLimitsUpdate = components['schemas']['PlanLimitsUpdate'];

/** This edition's only plan. */
export const DEFAULT_PLAN = 'default';

const COLUMNS = PLAN_LIMIT_NAMES.join(', ');

/**
 * The plans' application limits, a row per plan (plain SQL: the columns are the API's names). Read at
 * each use, no cache: other families enforce them (`current`).
 */
export class PlanLimitsService {
  private readonly dataSource: DataSource;

  constructor(core: CoreDeps) {
    this.dataSource = core.dataSource;
  }

  /** The limits of the instance's plan (`default`), in the caller's transaction when given one. */
  current(manager: EntityManager = this.dataSource.manager): Promise<PlanLimits> {
    return this.get(DEFAULT_PLAN, manager);
  }

  async get(planName: string, manager: EntityManager = this.dataSource.manager): Promise<PlanLimits> {
    const rows: Array<Record<PlanLimitName, string | number>> = await manager.query(
      `SELECT ${COLUMNS} FROM plan_limits WHERE plan_name = $1`,
      [planName],
    );
    if (rows.length === 0) throw notFound('Plan');
    return toLimits(rows[0]);
  }

  /** Sets the limits given; the others stay. */
  async update(planName: string, changes: PlanLimitsUpdate): Promise<PlanLimits> {
    const given = PLAN_LIMIT_NAMES.filter((name) => changes[name] !== undefined);
    const sets = [...given.map((name, i) => `${name} = $${i + 2}`), 'updated_at = now()'];
    return this.dataSource.transaction(async (tx) => {
      await tx.query(`UPDATE plan_limits SET ${sets.join(', ')} WHERE plan_name = $1`, [
        planName,
        ...given.map((name) => changes[name]),
      ]);
      return this.get(planName, tx);
    });
  }
}

/** bigint columns arrive as strings. */
function toLimits(row: Record<PlanLimitName, string | number>): PlanLimits {
  return Object.fromEntries(PLAN_LIMIT_NAMES.map((name) => [name, Number(row[name])])) as PlanLimits;
}
