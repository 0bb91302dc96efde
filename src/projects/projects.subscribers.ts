import { defineSubscriber, type SubscribersFactory } from '../core/events.js';
import type { RepositoriesService } from '../repository/repositories.service.js';
import type { StorageRecovery } from '../git/storage-recovery.js';
import './projects.events.js';

/**
 * A deletion moves the repository out of its path in its request and the removal finishes here, as
 * GitLab's repository removal worker does: it survives a crash at any point after the rows are gone.
 * A repository that forks borrow objects from stays at its path until each of them has its own copy.
 */
export const projectsSubscribers: SubscribersFactory<{
  storageRecovery: StorageRecovery;
  repositories: RepositoriesService;
}> = ({ storageRecovery, repositories }) => [
  defineSubscriber({
    event: 'project.deleted',
    name: 'repository_remove',
    retryDelaySeconds: 5,
    async handle(payload) {
      for (const borrower of payload.borrowers ?? [])
        await repositories.dissociate(borrower.storage, borrower.projectId, payload.projectId);
      if (payload.repository)
        await storageRecovery.finishRemoval(payload.repository.storage, payload.projectId);
    },
  }),
  defineSubscriber({
    event: 'project.fork_unlinked',
    name: 'fork_dissociate',
    retryDelaySeconds: 5,
    handle: ({ storage, projectId, lenderId }) => repositories.dissociate(storage, projectId, lenderId),
  }),
];
