import { defineHandlers } from '../core/handler.js';
import { pagedResponse, type RequestInfo } from '../core/pagination.js';
import type { OpenRepository } from '../repository/repositories.service.js';
import { presentBranch } from './branch.presenter.js';

const webUrl = ({ view }: OpenRepository, request: RequestInfo) =>
  `${request.externalUrl}/${view.project.namespace.fullPath}/${view.project.path}`;

export const branchesHandlers = defineHandlers(['branches'], {
  async listBranches({ params, subject, caller, services, request }) {
    const { repository, page } = await services.branches.list(caller, subject, params, request);
    const url = webUrl(repository, request);
    return pagedResponse(page, (branch) => presentBranch(branch, url));
  },

  async getBranch({ params, subject, caller, services, request }) {
    const { repository, branch } = await services.branches.get(caller, subject, params.branch);
    if (request.method === 'HEAD') return { status: 204, body: null };
    return { status: 200, body: presentBranch(branch, webUrl(repository, request)) };
  },

  async createBranch({ subject, body, caller, services, request }) {
    const { repository, branch } = await services.branches.create(caller, subject, body);
    return { status: 201, body: presentBranch(branch, webUrl(repository, request)) };
  },

  async deleteBranch({ params, subject, caller, services }) {
    await services.branches.delete(caller, subject, params.branch);
    return { status: 204, body: null };
  },

  async deleteMergedBranches({ subject, caller, services }) {
    await services.branches.deleteMerged(caller, subject);
    return { status: 202, body: { message: '202 Accepted' } };
  },
});
