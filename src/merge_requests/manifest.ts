import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { MergeRequests1767571200000 } from '../db/migrations/1767571200000-merge-requests.js';
import { MergeRequestLabels1767571400000 } from '../db/migrations/1767571400000-merge-request-labels.js';
import { MergeRequestListIndexes1767744300000 } from '../db/migrations/1767744300000-merge-request-list-indexes.js';
import { MergeRequest, MergeRequestDiff } from './merge-request.entity.js';
import { MergeRequestVersions } from './merge-request-versions.js';
import { mergeRequestsHandlers } from './merge-requests.handlers.js';
import { MergeRequestsService } from './merge-requests.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    mergeRequests: MergeRequestsService;
    /** Diff versions, head refs, merge status checks and the refresh after a push. */
    mergeRequestVersions: MergeRequestVersions;
  }
}

export const mergeRequestsManifest = defineFamily({
  name: 'merge_requests',
  entities: [MergeRequest, MergeRequestDiff],
  migrations: [
    MergeRequests1767571200000,
    MergeRequestLabels1767571400000,
    MergeRequestListIndexes1767744300000,
  ],
  services: [
    defineService(
      'mergeRequestVersions',
      ['repositories'],
      (core, { repositories }) => new MergeRequestVersions(core, repositories),
    ),
    defineService(
      'mergeRequests',
      ['repositories', 'mergeRequestVersions', 'labels', 'milestones'],
      (core, deps) => new MergeRequestsService(core, deps),
    ),
  ],
  subscribers: ({ mergeRequestVersions }) => [
    // A push to a source or target branch moves its open merge requests along (GitLab's refresh service).
    defineSubscriber({
      event: 'refs.updated',
      name: 'merge_requests.refresh_after_push',
      handle: (payload) => mergeRequestVersions.refreshAfterPush(payload),
    }),
    defineSubscriber({
      event: 'merge_request.merge_status_check_requested',
      name: 'merge_requests.merge_status_check',
      handle: ({ mergeRequestId }) => mergeRequestVersions.checkMergeStatus(mergeRequestId),
    }),
  ],
  handlers: mergeRequestsHandlers,
});
