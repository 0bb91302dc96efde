import { defineSubscriber, type SubscribersFactory } from '../core/events.js';
import type { StorageRecovery } from '../git/storage-recovery.js';
import './projects.events.js';

/**
 * A deletion moves the repository out of its path in its request and the removal finishes here, as
 * GitLab's repository removal worker does: it survives a crash at any point after the rows are gone.
 */
export const projectsSubscribers: SubscribersFactory<{ storageRecovery: StorageRecovery }> = ({
  storageRecovery,
}) => [
  defineSubscriber({
    event: 'project.deleted',
    name: 'repository_remove',
    retryDelaySeconds: 5,
    async handle(payload) {
      if (payload.repository)
        await storageRecovery.finishRemoval(payload.repository.storage, payload.projectId);
    },
  }),
];
