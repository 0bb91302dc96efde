import { defineHandlers } from '../core/handler.js';
import { presentProtectedTag } from './protected-tag.presenter.js';

export const protectedTagsHandlers = defineHandlers({
  async listProtectedTags({ params, caller, services, request }) {
    const page = await services.protectedTags.list(caller, params.id, params, request);
    return {
      status: 200,
      body: page.items.map((rule) => presentProtectedTag(rule, page.names)),
      headers: page.headers,
    };
  },

  async getProtectedTag({ params, caller, services }) {
    const { rules, names } = await services.protectedTags.get(caller, params.id, params.name);
    return { status: 200, body: presentProtectedTag(rules[0], names) };
  },

  async createProtectedTag({ params, body, caller, services }) {
    const { rules, names } = await services.protectedTags.create(caller, params.id, body!);
    return { status: 201, body: presentProtectedTag(rules[0], names) };
  },

  async deleteProtectedTag({ params, caller, services }) {
    await services.protectedTags.remove(caller, params.id, params.name);
    return { status: 204, body: null };
  },
});
