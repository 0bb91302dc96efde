/**
 * The approval settings in GitLab's project edit and in its project, contributed to the projects
 * family's `projectAttributes` (written where `/projects/:id/approvals` keeps them) and `projectFields`.
 */
import type {
  ProjectAttributesContribution,
  ProjectFieldsContribution,
} from '../projects/project-attributes.js';
import {
  DEFAULT_SETTINGS,
  type ApprovalSettingsService,
  type SettingsUpdate,
} from './approval-settings.service.js';

/** What an edit may name: the settings and `require_password_to_approve`, a deprecated name of one. */
const SETTINGS_UPDATE_KEYS: Array<keyof SettingsUpdate> = [
  ...(Object.keys(DEFAULT_SETTINGS) as Array<keyof typeof DEFAULT_SETTINGS>),
  'require_password_to_approve',
];

export function approvalProjectAttributes(approvals: ApprovalSettingsService): ProjectAttributesContribution {
  return {
    async write(tx, projectId, params) {
      const body: SettingsUpdate = Object.fromEntries(
        SETTINGS_UPDATE_KEYS.filter((key) => params[key] !== undefined).map((key) => [key, params[key]]),
      );
      // GitLab's project edit also names `approvals_before_merge` `fallback_approvals_required`.
      if (body.approvals_before_merge === undefined && typeof params.fallback_approvals_required === 'number')
        body.approvals_before_merge = params.fallback_approvals_required;
      if (Object.keys(body).length > 0) await approvals.writeSettings(tx, projectId, body);
    },
  };
}

export function approvalProjectFields(approvals: ApprovalSettingsService): ProjectFieldsContribution {
  return {
    // GitLab's project shows `approvals_before_merge` alone, on the tiers that have approvals.
    async read(manager, projectIds) {
      if (!approvals.enabled) return new Map();
      const settings = await approvals.settingsOf(manager, projectIds);
      return new Map(
        [...settings].map(([id, { approvals_before_merge }]) => [id, { approvals_before_merge }]),
      );
    },
  };
}
