import { defineHandlers } from '../core/handler.js';
import {
  presentCurrentUser,
  presentUser,
  presentUserDetailsWithAdmin,
  presentUserSummary,
  presentUserWithAdmin,
} from './user.presenter.js';

export const usersHandlers = defineHandlers(['users'], {
  async getCurrentUser({ caller, services, request }) {
    const { asAdmin, view } = await services.users.current(caller);
    const body = asAdmin
      ? presentUserWithAdmin(view, request.externalUrl)
      : presentCurrentUser(view, request.externalUrl);
    return { status: 200, body };
  },

  async listUsers({ params, caller, services, request }) {
    const list = await services.users.list(caller, params, request);
    const body = list.asAdmin
      ? list.items.map((view) => presentUserWithAdmin(view, request.externalUrl))
      : list.items.map((view) => presentUserSummary(view.user, request.externalUrl));
    return { status: 200, body, headers: list.headers };
  },

  async getUser({ params, caller, services, request }) {
    const found = await services.users.find(caller, params.id);
    const body = found.asAdmin
      ? presentUserDetailsWithAdmin(found.view, request.externalUrl)
      : presentUser(found.view, request.externalUrl);
    return { status: 200, body };
  },

  async createUser({ body, caller, services, request }) {
    const view = await services.users.create(caller, body);
    return { status: 201, body: presentUserWithAdmin(view, request.externalUrl) };
  },

  async updateUser({ params, body, caller, services, request }) {
    const view = await services.users.update(caller, params.id, body ?? {});
    return { status: 200, body: presentUserWithAdmin(view, request.externalUrl) };
  },

  async blockUser({ params, caller, services }) {
    return { status: 201, body: await services.users.block(caller, params.id) };
  },

  async unblockUser({ params, caller, services }) {
    return { status: 201, body: await services.users.unblock(caller, params.id) };
  },
});
