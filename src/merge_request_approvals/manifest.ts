import { mergeRequestApprovalsAbilities } from './abilities.js';
import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { MergeRequestApprovals1767745000000 } from './migrations/1767745000000-merge-request-approvals.js';
import { ApprovalRulesService } from './approval-rules.service.js';
import { ApprovalSettingsService } from './approval-settings.service.js';
import { mergeRequestApprovalsHandlers } from './approvals.handlers.js';
import { MergeRequestApprovalsService } from './approvals.service.js';
import { CodeOwnersService } from './code-owners.service.js';
import { approvalFields, approvalListFilter, notApprovedCheck } from './merge-request-extensions.js';
import { approvalProjectAttributes, approvalProjectFields } from './project-attributes.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** Approval state, approving, and the approvals a push removes. */
    mergeRequestApprovals: MergeRequestApprovalsService;
    /** A project's approval settings, and whether approvals exist on this tier. */
    approvalSettings: ApprovalSettingsService;
    /** The project's and each merge request's approval rules. */
    approvalRules: ApprovalRulesService;
    /** CODEOWNERS and the code owner rules of merge requests. */
    codeOwners: CodeOwnersService;
  }
}

export const mergeRequestApprovalsManifest = defineFamily({
  name: 'merge_request_approvals',
  abilities: mergeRequestApprovalsAbilities,
  migrations: [MergeRequestApprovals1767745000000],
  services: [
    defineService(
      'codeOwners',
      ['repositories', 'mergeRequestVersions'],
      (core, deps) => new CodeOwnersService(core, deps),
    ),
    defineService('approvalSettings', [], (core) => new ApprovalSettingsService(core)),
    defineService(
      'approvalRules',
      ['mergeRequests', 'approvalSettings'],
      (core, deps) => new ApprovalRulesService(core, deps),
    ),
    defineService(
      'mergeRequestApprovals',
      [
        'mergeRequests',
        'mergeRequestVersions',
        'repositories',
        'codeOwners',
        'approvalSettings',
        'approvalRules',
      ],
      (core, deps) => new MergeRequestApprovalsService(core, deps),
    ),
  ],
  subscribers: ({ mergeRequestApprovals, codeOwners }) => [
    // GitLab's `reset_approvals_on_push`: new commits on the source branch clear earlier approvals.
    defineSubscriber({
      event: 'refs.updated',
      name: 'merge_request_approvals.reset_on_push',
      handle: (payload) => mergeRequestApprovals.afterPush(payload),
    }),
    // Every new version (and target move) asks for a merge status check: the code owner rules follow it.
    defineSubscriber({
      event: 'merge_request.merge_status_check_requested',
      name: 'merge_request_approvals.sync_code_owner_rules',
      handle: ({ mergeRequestId }) => codeOwners.sync(mergeRequestId),
    }),
  ],
  contributes: {
    projectAttributes: ({ approvalSettings }) => approvalProjectAttributes(approvalSettings),
    projectFields: ({ approvalSettings }) => approvalProjectFields(approvalSettings),
    mergeChecks: ({ approvalSettings }) => [notApprovedCheck(approvalSettings)],
    mergeRequestFields: () => approvalFields,
    mergeRequestHooks: ({ approvalRules }) => ({ created: (tx, mr) => approvalRules.created(tx, mr) }),
    mergeRequestListFilters: ({ approvalSettings }) => approvalListFilter(approvalSettings),
    preReceiveChecks: ({ codeOwners }) => codeOwners.preReceiveCheck(),
  },
  handlers: mergeRequestApprovalsHandlers,
});
