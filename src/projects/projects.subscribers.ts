import { defineSubscriber, type SubscribersFactory } from '../core/events.js';
import type { RepositoryStorage } from '../git/storage.js';
import './projects.events.js';

/**
 * Deletion moves a repository aside in its request and removes it here, as GitLab's repository removal
 * worker does: the removal survives a crash between the commit and the last file.
 */
export const projectsSubscribers: SubscribersFactory<{ storage: RepositoryStorage }> = ({ storage }) => [
  defineSubscriber({
    event: 'project.deleted',
    name: 'repository_remove',
    retryDelaySeconds: 5,
    async handle(payload) {
      if (payload.repository) await storage.removeAside(payload.repository.storage, payload.repository.aside);
    },
  }),
];
