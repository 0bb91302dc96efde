import type { DataSource, EntityManager } from 'typeorm';
import { hashToken } from '../core/auth.js';
import type { CoreDeps } from '../core/family.js';
import { Runner } from './runner.entity.js';

export const RUNNER_TOKEN_PREFIX = 'glrt-';

/** What a runner tells of itself on each request (`info` of POST /jobs/request, /runners/verify). */
export interface RunnerContact {
  info?: Record<string, unknown> | null;
  ip?: string | null;
}

/** Runners: registration, authentication by token, and what users may see and change of them. */
export class RunnersService {
  private readonly dataSource: DataSource;

  constructor(core: CoreDeps) {
    this.dataSource = core.dataSource;
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
}
