import type { DataSource } from 'typeorm';
import { hashToken } from '../core/auth.js';
import type { CoreDeps } from '../core/family.js';
import { Runner } from './runner.entity.js';

export const RUNNER_TOKEN_PREFIX = 'glrt-';

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
}
