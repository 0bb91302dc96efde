import { defineHandlers } from '../core/handler.js';
import { presentCommitStatus } from './commit-status.presenter.js';

export const commitStatusesHandlers = defineHandlers(['commitStatuses'], {
  async createCommitStatus({ params, subject, body, caller, services, request }) {
    const job = await services.commitStatuses.create(caller, subject, params.sha, body);
    const authors = await services.commitStatuses.authors([job]);
    return { status: 201, body: presentCommitStatus(job, authors, request.externalUrl) };
  },

  async listCommitStatuses({ params, subject, services, request }) {
    const page = await services.commitStatuses.list(subject, params.sha, params, request);
    const authors = await services.commitStatuses.authors(page.items);
    return {
      status: 200,
      body: page.items.map((job) => presentCommitStatus(job, authors, request.externalUrl)),
      headers: page.headers,
    };
  },
});
