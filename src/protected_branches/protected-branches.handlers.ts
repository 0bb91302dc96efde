import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentProtectedBranch } from './protected-branch.presenter.js';
import type { ProtectedBranchRecords } from './protected-branches.service.js';

const single = ({ rules, names }: ProtectedBranchRecords) => presentProtectedBranch(rules[0], names);

export const protectedBranchesHandlers = defineHandlers(['protectedBranches'], {
  async listProtectedBranches({ params, subject, caller, services, request }) {
    const page = await services.protectedBranches.list(caller, subject, params, request);
    return pagedResponse(page, (rule) => presentProtectedBranch(rule, page.names));
  },

  async getProtectedBranch({ params, subject, caller, services }) {
    return {
      status: 200,
      body: single(await services.protectedBranches.get(caller, subject, params.name)),
    };
  },

  async protectBranch({ subject, body, caller, services }) {
    return { status: 201, body: single(await services.protectedBranches.create(caller, subject, body)) };
  },

  async updateProtectedBranch({ params, subject, body, caller, services }) {
    const records = await services.protectedBranches.update(caller, subject, params.name, body);
    return { status: 200, body: single(records) };
  },

  async updateProtectedBranchWithPut({ params, subject, body, caller, services }) {
    const records = await services.protectedBranches.update(caller, subject, params.name, body);
    return { status: 200, body: single(records) };
  },

  async unprotectBranch({ params, subject, caller, services }) {
    await services.protectedBranches.remove(caller, subject, params.name);
    return { status: 204, body: null };
  },
});
