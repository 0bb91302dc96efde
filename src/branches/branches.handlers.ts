import { defineHandlers } from '../core/handler.js';
import type { RequestInfo } from '../core/pagination.js';
import type { OpenRepository } from '../git/repositories.service.js';
import { presentBranch } from './branch.presenter.js';

const webUrl = ({ view }: OpenRepository, request: RequestInfo) =>
  `${request.externalUrl}/${view.project.namespace.fullPath}/${view.project.path}`;

export const branchesHandlers = defineHandlers({
  async listBranches({ params, caller, services, request }) {
    const { repository, page } = await services.branches.list(caller, params.id, params, request);
    const url = webUrl(repository, request);
    return {
      status: 200,
      body: page.items.map((branch) => presentBranch(branch, url)),
      headers: page.headers,
    };
  },

  async getBranch({ params, caller, services, request }) {
    const { repository, branch } = await services.branches.get(caller, params.id, params.branch);
    if (request.method === 'HEAD') return { status: 204, body: null };
    return { status: 200, body: presentBranch(branch, webUrl(repository, request)) };
  },

  async createBranch({ params, body, caller, services, request }) {
    const { repository, branch } = await services.branches.create(caller, params.id, body);
    return { status: 201, body: presentBranch(branch, webUrl(repository, request)) };
  },

  async deleteBranch({ params, caller, services }) {
    await services.branches.delete(caller, params.id, params.branch);
    return { status: 204, body: null };
  },

  async deleteMergedBranches({ params, caller, services }) {
    await services.branches.deleteMerged(caller, params.id);
    return { status: 202, body: { message: '202 Accepted' } };
  },
});
