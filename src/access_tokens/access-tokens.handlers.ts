import { defineHandlers } from '../core/handler.js';
import {
  presentIssuedPersonalAccessToken,
  presentIssuedResourceAccessToken,
  presentPersonalAccessToken,
  presentResourceAccessToken,
} from './access-token.presenter.js';
import { utcToday } from './token-rules.js';

export const accessTokensHandlers = defineHandlers({
  async listPersonalAccessTokens({ params, caller, services, request }) {
    const page = await services.accessTokens.listPersonal(caller, params, request);
    const today = utcToday();
    return {
      status: 200,
      body: page.items.map((token) => presentPersonalAccessToken(token, today)),
      headers: page.headers,
    };
  },

  async getCurrentPersonalAccessToken({ caller, services }) {
    return { status: 200, body: presentPersonalAccessToken(await services.accessTokens.getCurrent(caller)) };
  },

  async revokeCurrentPersonalAccessToken({ caller, services }) {
    await services.accessTokens.revokeCurrent(caller);
    return { status: 204, body: null };
  },

  async rotateCurrentPersonalAccessToken({ body, caller, services }) {
    const issued = await services.accessTokens.rotateCurrent(caller, body?.expires_at);
    return { status: 200, body: presentIssuedPersonalAccessToken(issued) };
  },

  async getPersonalAccessToken({ params, caller, services }) {
    const token = await services.accessTokens.getPersonal(caller, params.id);
    return { status: 200, body: presentPersonalAccessToken(token) };
  },

  async revokePersonalAccessToken({ params, caller, services }) {
    await services.accessTokens.revokePersonal(caller, params.id);
    return { status: 204, body: null };
  },

  async rotatePersonalAccessToken({ params, body, caller, services }) {
    const issued = await services.accessTokens.rotatePersonal(caller, params.id, body?.expires_at);
    return { status: 200, body: presentIssuedPersonalAccessToken(issued) };
  },

  async createUserPersonalAccessToken({ params, body, caller, services }) {
    const issued = await services.accessTokens.createForUser(caller, params.user_id, body);
    return { status: 201, body: presentIssuedPersonalAccessToken(issued) };
  },

  async createCurrentUserPersonalAccessToken({ body, caller, services }) {
    const issued = await services.accessTokens.createForCaller(caller, body);
    return { status: 201, body: presentIssuedPersonalAccessToken(issued) };
  },

  async listProjectAccessTokens({ params, caller, services, request }) {
    const page = await services.accessTokens.listResource(caller, 'project', params.id, params, request);
    const today = utcToday();
    return {
      status: 200,
      body: page.items.map((token) => presentResourceAccessToken(token, today)),
      headers: page.headers,
    };
  },

  async createProjectAccessToken({ params, body, caller, services }) {
    const issued = await services.accessTokens.createResource(caller, 'project', params.id, body);
    return { status: 201, body: presentIssuedResourceAccessToken(issued) };
  },

  async rotateCurrentProjectAccessToken({ params, body, caller, services }) {
    const issued = await services.accessTokens.rotateCurrentResource(
      caller,
      'project',
      params.id,
      body?.expires_at,
    );
    return { status: 200, body: presentIssuedResourceAccessToken(issued) };
  },

  async getProjectAccessToken({ params, caller, services }) {
    const token = await services.accessTokens.getResource(caller, 'project', params.id, params.token_id);
    return { status: 200, body: presentResourceAccessToken(token) };
  },

  async revokeProjectAccessToken({ params, caller, services }) {
    await services.accessTokens.revokeResource(caller, 'project', params.id, params.token_id);
    return { status: 204, body: null };
  },

  async rotateProjectAccessToken({ params, body, caller, services }) {
    const issued = await services.accessTokens.rotateResource(
      caller,
      'project',
      params.id,
      params.token_id,
      body?.expires_at,
    );
    return { status: 200, body: presentIssuedResourceAccessToken(issued) };
  },

  async listGroupAccessTokens({ params, caller, services, request }) {
    const page = await services.accessTokens.listResource(caller, 'group', params.id, params, request);
    const today = utcToday();
    return {
      status: 200,
      body: page.items.map((token) => presentResourceAccessToken(token, today)),
      headers: page.headers,
    };
  },

  async createGroupAccessToken({ params, body, caller, services }) {
    const issued = await services.accessTokens.createResource(caller, 'group', params.id, body);
    return { status: 201, body: presentIssuedResourceAccessToken(issued) };
  },

  async rotateCurrentGroupAccessToken({ params, body, caller, services }) {
    const issued = await services.accessTokens.rotateCurrentResource(
      caller,
      'group',
      params.id,
      body?.expires_at,
    );
    return { status: 200, body: presentIssuedResourceAccessToken(issued) };
  },

  async getGroupAccessToken({ params, caller, services }) {
    const token = await services.accessTokens.getResource(caller, 'group', params.id, params.token_id);
    return { status: 200, body: presentResourceAccessToken(token) };
  },

  async revokeGroupAccessToken({ params, caller, services }) {
    await services.accessTokens.revokeResource(caller, 'group', params.id, params.token_id);
    return { status: 204, body: null };
  },

  async rotateGroupAccessToken({ params, body, caller, services }) {
    const issued = await services.accessTokens.rotateResource(
      caller,
      'group',
      params.id,
      params.token_id,
      body?.expires_at,
    );
    return { status: 200, body: presentIssuedResourceAccessToken(issued) };
  },
});
