/**
 * A project's approval settings (`/projects/:id/approvals`), which its project edit also writes; and
 * whether approvals exist at all on this tier.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import { badParameter, validationFailed } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import type { ProjectView } from '../projects/projects.service.js';

export type SettingsUpdate = components['schemas']['ProjectApprovalSettingsUpdate'];

export interface ApprovalSettings {
  approvals_before_merge: number;
  reset_approvals_on_push: boolean;
  selective_code_owner_removals: boolean;
  disable_overriding_approvers_per_merge_request: boolean;
  merge_requests_author_approval: boolean;
  merge_requests_disable_committers_approval: boolean;
  require_reauthentication_to_approve: boolean;
}

export const DEFAULT_SETTINGS: ApprovalSettings = {
  approvals_before_merge: 0,
  reset_approvals_on_push: true,
  selective_code_owner_removals: false,
  disable_overriding_approvers_per_merge_request: false,
  merge_requests_author_approval: false,
  merge_requests_disable_committers_approval: false,
  require_reauthentication_to_approve: false,
};

const SETTING_KEYS = Object.keys(DEFAULT_SETTINGS) as Array<keyof ApprovalSettings>;

export class ApprovalSettingsService {
  private readonly dataSource: DataSource;
  /** Approvals exist on this tier (Premium and Ultimate). */
  readonly enabled: boolean;
  /** The `approved` list filter is on (flag `mr_approved_filter`). */
  readonly approvedFilter: boolean;

  constructor(deps: CoreDeps) {
    this.dataSource = deps.dataSource;
    // A Free instance has no approvals: nothing holds a merge back and no rule is copied.
    this.enabled = deps.config.tier !== 'free';
    this.approvedFilter = deps.config.features.has('mr_approved_filter');
  }

  async settings(
    projectId: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ApprovalSettings> {
    return (await this.settingsOf(manager, [projectId])).get(projectId)!;
  }

  async settingsOf(manager: EntityManager, projectIds: number[]): Promise<Map<number, ApprovalSettings>> {
    const rows = (
      projectIds.length
        ? await manager.query(`SELECT * FROM project_approval_settings WHERE project_id = ANY($1::int[])`, [
            projectIds,
          ])
        : []
    ) as Array<ApprovalSettings & { project_id: number }>;
    const found = new Map(rows.map((row) => [row.project_id, row]));
    return new Map(
      projectIds.map((id) => {
        const row = found.get(id);
        return [id, row ? pick(row) : { ...DEFAULT_SETTINGS }];
      }),
    );
  }

  async updateSettings(view: ProjectView, body: SettingsUpdate): Promise<ApprovalSettings> {
    const given = Object.entries(body).filter(([, value]) => value !== undefined);
    if (given.length === 0)
      throw badParameter(
        'approvals_before_merge, reset_approvals_on_push, selective_code_owner_removals, disable_overriding_approvers_per_merge_request, merge_requests_author_approval, merge_requests_disable_committers_approval, require_password_to_approve, require_reauthentication_to_approve are missing, at least one parameter must be provided',
      );
    return this.dataSource.transaction((tx) => this.writeSettings(tx, view.project.id, body));
  }

  /** Stores the settings given in `tx`, under the same rules whether they come from here or a project edit. */
  async writeSettings(tx: EntityManager, projectId: number, body: SettingsUpdate): Promise<ApprovalSettings> {
    await tx.query(
      `INSERT INTO project_approval_settings (project_id) VALUES ($1) ON CONFLICT (project_id) DO NOTHING`,
      [projectId],
    );
    await tx.query(`SELECT 1 FROM project_approval_settings WHERE project_id = $1 FOR UPDATE`, [projectId]);
    const next = { ...(await this.settings(projectId, tx)) };
    for (const key of SETTING_KEYS) if (body[key] !== undefined) (next[key] as unknown) = body[key];
    if (
      body.require_password_to_approve !== undefined &&
      body.require_reauthentication_to_approve === undefined
    )
      next.require_reauthentication_to_approve = body.require_password_to_approve;
    if (body.selective_code_owner_removals === true && next.reset_approvals_on_push)
      throw validationFailed({
        base: ['selective_code_owner_removals can only be enabled when reset_approvals_on_push is disabled'],
      });
    await tx.query(
      `UPDATE project_approval_settings SET ${SETTING_KEYS.map((key, i) => `${key} = $${i + 2}`).join(', ')}
       WHERE project_id = $1`,
      [projectId, ...SETTING_KEYS.map((key) => next[key])],
    );
    return next;
  }
}

function pick(row: ApprovalSettings): ApprovalSettings {
  return Object.fromEntries(SETTING_KEYS.map((key) => [key, row[key]])) as unknown as ApprovalSettings;
}
