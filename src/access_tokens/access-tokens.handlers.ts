import { defineHandlers } from '../core/handler.js';
import {
  presentIssuedPersonalAccessToken,
  presentIssuedResourceAccessToken,
  presentPersonalAccessToken,
  presentResourceAccessToken,
} from './access-token.presenter.js';
import { utcToday } from './token-rules.js';
import type { Caller } from '../core/auth.js';
import type { RequestInfo } from '../core/pagination.js';
import type { ServiceRegistry } from '../core/family.js';
import type { NewResourceTokenBody, ResourceKind, TokenFilters } from './access-tokens.service.js';

/** What the project and group token operations share; each pair differs only in its resource kind. */
interface ResourceContext {
  params: { id: string | number };
  caller: Caller;
  services: ServiceRegistry;
}
type WithToken = ResourceContext & { params: { token_id: number } };
type WithExpiry = { body?: { expires_at?: string } | null };

const resourceTokens = {
  async list(context: ResourceContext & { params: TokenFilters; request: RequestInfo }, kind: ResourceKind) {
    const { params, caller, services, request } = context;
    const page = await services.accessTokens.listResource(caller, kind, params.id, params, request);
    const today = utcToday();
    return {
      status: 200 as const,
      body: page.items.map((token) => presentResourceAccessToken(token, today)),
      headers: page.headers,
    };
  },

  async create(context: ResourceContext & { body: NewResourceTokenBody }, kind: ResourceKind) {
    const { params, body, caller, services } = context;
    const issued = await services.accessTokens.createResource(caller, kind, params.id, body);
    return { status: 201 as const, body: presentIssuedResourceAccessToken(issued) };
  },

  async rotateCurrent(context: ResourceContext & WithExpiry, kind: ResourceKind) {
    const { params, body, caller, services } = context;
    const issued = await services.accessTokens.rotateCurrentResource(
      caller,
      kind,
      params.id,
      body?.expires_at,
    );
    return { status: 200 as const, body: presentIssuedResourceAccessToken(issued) };
  },

  async get({ params, caller, services }: WithToken, kind: ResourceKind) {
    const token = await services.accessTokens.getResource(caller, kind, params.id, params.token_id);
    return { status: 200 as const, body: presentResourceAccessToken(token) };
  },

  async revoke({ params, caller, services }: WithToken, kind: ResourceKind) {
    await services.accessTokens.revokeResource(caller, kind, params.id, params.token_id);
    return { status: 204 as const, body: null };
  },

  async rotate(context: WithToken & WithExpiry, kind: ResourceKind) {
    const { params, body, caller, services } = context;
    const issued = await services.accessTokens.rotateResource(
      caller,
      kind,
      params.id,
      params.token_id,
      body?.expires_at,
    );
    return { status: 200 as const, body: presentIssuedResourceAccessToken(issued) };
  },
};

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

  listProjectAccessTokens: (context) => resourceTokens.list(context, 'project'),
  createProjectAccessToken: (context) => resourceTokens.create(context, 'project'),
  rotateCurrentProjectAccessToken: (context) => resourceTokens.rotateCurrent(context, 'project'),
  getProjectAccessToken: (context) => resourceTokens.get(context, 'project'),
  revokeProjectAccessToken: (context) => resourceTokens.revoke(context, 'project'),
  rotateProjectAccessToken: (context) => resourceTokens.rotate(context, 'project'),

  listGroupAccessTokens: (context) => resourceTokens.list(context, 'group'),
  createGroupAccessToken: (context) => resourceTokens.create(context, 'group'),
  rotateCurrentGroupAccessToken: (context) => resourceTokens.rotateCurrent(context, 'group'),
  getGroupAccessToken: (context) => resourceTokens.get(context, 'group'),
  revokeGroupAccessToken: (context) => resourceTokens.revoke(context, 'group'),
  rotateGroupAccessToken: (context) => resourceTokens.rotate(context, 'group'),
});
