import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentProtectedTag } from './protected-tag.presenter.js';

export const protectedTagsHandlers = defineHandlers(['protectedTags'], {
  async listProtectedTags({ params, subject, caller, services, request }) {
    const page = await services.protectedTags.list(caller, subject, params, request);
    return pagedResponse(page, (rule) => presentProtectedTag(rule, page.names));
  },

  async getProtectedTag({ params, subject, caller, services }) {
    const { rules, names } = await services.protectedTags.get(caller, subject, params.name);
    return { status: 200, body: presentProtectedTag(rules[0], names) };
  },

  async createProtectedTag({ subject, body, caller, services }) {
    const { rules, names } = await services.protectedTags.create(caller, subject, body!);
    return { status: 201, body: presentProtectedTag(rules[0], names) };
  },

  async deleteProtectedTag({ params, subject, caller, services }) {
    await services.protectedTags.remove(caller, subject, params.name);
    return { status: 204, body: null };
  },
});
