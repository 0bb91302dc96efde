import { defineHandlers } from '../core/handler.js';
import { presentProtectedBranch } from './protected-branch.presenter.js';
import type { ProtectedBranchRecords } from './protected-branches.service.js';

const single = ({ rules, names }: ProtectedBranchRecords) => presentProtectedBranch(rules[0], names);

export const protectedBranchesHandlers = defineHandlers({
  async listProtectedBranches({ params, caller, services, request }) {
    const page = await services.protectedBranches.list(caller, params.id, params, request);
    return {
      status: 200,
      body: page.items.map((rule) => presentProtectedBranch(rule, page.names)),
      headers: page.headers,
    };
  },

  async getProtectedBranch({ params, caller, services }) {
    return {
      status: 200,
      body: single(await services.protectedBranches.get(caller, params.id, params.name)),
    };
  },

  async protectBranch({ params, body, caller, services }) {
    return { status: 201, body: single(await services.protectedBranches.create(caller, params.id, body)) };
  },

  async updateProtectedBranch({ params, body, caller, services }) {
    const records = await services.protectedBranches.update(caller, params.id, params.name, body);
    return { status: 200, body: single(records) };
  },

  async updateProtectedBranchWithPut({ params, body, caller, services }) {
    const records = await services.protectedBranches.update(caller, params.id, params.name, body);
    return { status: 200, body: single(records) };
  },

  async unprotectBranch({ params, caller, services }) {
    await services.protectedBranches.remove(caller, params.id, params.name);
    return { status: 204, body: null };
  },
});
