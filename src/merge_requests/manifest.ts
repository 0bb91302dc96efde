import { mergeRequestsAbilities } from './abilities.js';
import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { MergeRequests1767571200000 } from './migrations/1767571200000-merge-requests.js';
import { MergeRequestLabels1767571400000 } from './migrations/1767571400000-merge-request-labels.js';
import { ForkMergeRequests1767744100000 } from './migrations/1767744100000-fork-merge-requests.js';
import { MergeRequestListIndexes1767744300000 } from './migrations/1767744300000-merge-request-list-indexes.js';
import { MergeRequestMerging1767744400000 } from './migrations/1767744400000-merge-request-merging.js';
import { MergeRequestLabelIds1767800100000 } from './migrations/1767800100000-merge-request-label-ids.js';
import { MergeRequestChanges1767800600000 } from './migrations/1767800600000-merge-request-changes.js';
import { MergeRequestRecordChanges1767800700000 } from './migrations/1767800700000-merge-request-record-changes.js';
import { builtInMergeChecks } from './merge-checks.js';
import { MergeRequest, MergeRequestDiff } from './merge-request.entity.js';
import { MergeRequestListsService } from './merge-request-lists.js';
import { MergeRequestVersions } from './merge-request-versions.js';
import { MergeRequestWritesService } from './merge-request-writes.js';
import { mergeRequestsHandlers } from './merge-requests.handlers.js';
import { MergeRequestsService } from './merge-requests.service.js';
import { MergeRequestMerging } from './merging.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    /** One merge request: finding it, reading it, its diffs, versions and time tracking. */
    mergeRequests: MergeRequestsService;
    /** The lists and their search filters. */
    mergeRequestLists: MergeRequestListsService;
    /** Opening, editing and deleting. */
    mergeRequestWrites: MergeRequestWritesService;
    /** Diff versions, head refs, merge status checks and the refresh after a push. */
    mergeRequestVersions: MergeRequestVersions;
    /** Merges, merge refs and rebases. */
    mergeRequestMerging: MergeRequestMerging;
  }
}

export const mergeRequestsManifest = defineFamily({
  name: 'merge_requests',
  abilities: mergeRequestsAbilities,
  entities: [MergeRequest, MergeRequestDiff],
  migrations: [
    MergeRequests1767571200000,
    MergeRequestLabels1767571400000,
    ForkMergeRequests1767744100000,
    MergeRequestListIndexes1767744300000,
    MergeRequestMerging1767744400000,
    MergeRequestLabelIds1767800100000,
    MergeRequestChanges1767800600000,
    MergeRequestRecordChanges1767800700000,
  ],
  services: [
    defineService(
      'mergeRequestVersions',
      ['repositories'],
      (core, { repositories }) => new MergeRequestVersions(core, repositories),
    ),
    defineService(
      'mergeRequests',
      ['repositories', 'mergeRequestVersions', 'protectedRefs'],
      (core, deps) => new MergeRequestsService(core, deps),
    ),
    defineService(
      'mergeRequestLists',
      ['mergeRequests'],
      (core, deps) => new MergeRequestListsService(core, deps),
    ),
    defineService(
      'mergeRequestWrites',
      [
        'mergeRequests',
        'mergeRequestVersions',
        'repositories',
        'labels',
        'milestones',
        'projects',
        'protectedRefs',
      ],
      (core, deps) => new MergeRequestWritesService(core, deps),
    ),
    defineService(
      'mergeRequestMerging',
      ['repositories', 'mergeRequests', 'mergeRequestVersions', 'projects', 'protectedRefs'],
      (core, deps) => new MergeRequestMerging(core, deps),
    ),
  ],
  subscribers: ({ mergeRequestVersions, mergeRequestMerging }) => [
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
    // GitLab removes the source branch after the merge, off the request (DeleteSourceBranchWorker).
    defineSubscriber({
      event: 'merge_request.merged',
      name: 'merge_requests.remove_source_branch',
      handle: ({ mergeRequestId, userId, removeSourceBranchAt }) =>
        mergeRequestMerging.afterMerge(mergeRequestId, userId, removeSourceBranchAt),
    }),
    // An automatic merge is tried whenever something that can hold it back may have changed.
    defineSubscriber({
      event: 'merge_request.auto_merge_check',
      name: 'merge_requests.auto_merge',
      handle: ({ mergeRequestId }) => mergeRequestMerging.tryAutoMerge(mergeRequestId),
    }),
    defineSubscriber({
      event: 'merge_request.changed',
      name: 'merge_requests.auto_merge_after_change',
      handle: ({ mergeRequestId }) => mergeRequestMerging.tryAutoMerge(mergeRequestId),
    }),
    defineSubscriber({
      event: 'merge_request.rebase_requested',
      name: 'merge_requests.rebase',
      handle: ({ mergeRequestId, userId }) => mergeRequestMerging.runRebase(mergeRequestId, userId),
    }),
  ],
  contributes: {
    mergeChecks: () => builtInMergeChecks,
    labelCounts: ({ mergeRequestLists }) => ({
      async count(caller, labelIds, scope) {
        const open = await mergeRequestLists.countOpenWithLabels(caller, labelIds, scope);
        return new Map([...open].map(([id, count]) => [id, { open_merge_requests_count: count }]));
      },
    }),
  },
  handlers: mergeRequestsHandlers,
});
