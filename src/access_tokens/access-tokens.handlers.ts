import { defineHandlers } from '../core/handler.js';
import {
  presentIssuedPersonalAccessToken,
  presentIssuedResourceAccessToken,
  presentPersonalAccessToken,
  presentResourceAccessToken,
} from './access-token.presenter.js';
import { utcToday } from './token-rules.js';
import type { Caller } from '../core/auth.js';
import { pagedResponse, type RequestInfo } from '../core/pagination.js';
import type { ServiceRegistry } from '../core/family.js';
import type { GroupView } from '../groups/groups.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import type {
  NewResourceTokenBody,
  ResourceKind,
  ResourceRef,
  TokenFilters,
} from './access-tokens.service.js';

/** What the project and group token operations share; each pair differs only in its resource. */
interface ResourceContext {
  caller: Caller;
  services: Pick<ServiceRegistry, 'accessTokens'>;
}
type WithToken = ResourceContext & { params: { token_id: number } };

/** The resource the pipeline resolved, as the access tokens service takes it. */
const project = (context: { subject: ProjectView }): ResourceRef => ({
  kind: 'project',
  view: context.subject,
});
const group = (context: { subject: GroupView }): ResourceRef => ({ kind: 'group', view: context.subject });
type WithExpiry = { body?: { expires_at?: string } | null };

const resourceTokens = {
  async list(context: ResourceContext & { params: TokenFilters; request: RequestInfo }, ref: ResourceRef) {
    const { params, caller, services, request } = context;
    const page = await services.accessTokens.listResource(caller, ref, params, request);
    const today = utcToday();
    return pagedResponse(page, (token) => presentResourceAccessToken(token, today));
  },

  async create(context: ResourceContext & { body: NewResourceTokenBody }, ref: ResourceRef) {
    const { body, caller, services } = context;
    const issued = await services.accessTokens.createResource(caller, ref, body);
    return { status: 201 as const, body: presentIssuedResourceAccessToken(issued) };
  },

  /** Instance-level (a bot rotating its own token): the resource is looked up from the path. */
  async rotateCurrent(
    context: ResourceContext & WithExpiry & { params: { id: string | number } },
    kind: ResourceKind,
  ) {
    const { params, body, caller, services } = context;
    const issued = await services.accessTokens.rotateCurrentResource(
      caller,
      kind,
      params.id,
      body?.expires_at,
    );
    return { status: 200 as const, body: presentIssuedResourceAccessToken(issued) };
  },

  async get({ params, caller, services }: WithToken, ref: ResourceRef) {
    const token = await services.accessTokens.getResource(caller, ref, params.token_id);
    return { status: 200 as const, body: presentResourceAccessToken(token) };
  },

  async revoke({ params, caller, services }: WithToken, ref: ResourceRef) {
    await services.accessTokens.revokeResource(caller, ref, params.token_id);
    return { status: 204 as const, body: null };
  },

  async rotate(context: WithToken & WithExpiry, ref: ResourceRef) {
    const { params, body, caller, services } = context;
    const issued = await services.accessTokens.rotateResource(caller, ref, params.token_id, body?.expires_at);
    return { status: 200 as const, body: presentIssuedResourceAccessToken(issued) };
  },
};

export const accessTokensHandlers = defineHandlers(['accessTokens'], {
  async listPersonalAccessTokens({ params, caller, services, request }) {
    const page = await services.accessTokens.listPersonal(caller, params, request);
    const today = utcToday();
    return pagedResponse(page, (token) => presentPersonalAccessToken(token, today));
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

  listProjectAccessTokens: (context) => resourceTokens.list(context, project(context)),
  createProjectAccessToken: (context) => resourceTokens.create(context, project(context)),
  rotateCurrentProjectAccessToken: (context) => resourceTokens.rotateCurrent(context, 'project'),
  getProjectAccessToken: (context) => resourceTokens.get(context, project(context)),
  revokeProjectAccessToken: (context) => resourceTokens.revoke(context, project(context)),
  rotateProjectAccessToken: (context) => resourceTokens.rotate(context, project(context)),

  listGroupAccessTokens: (context) => resourceTokens.list(context, group(context)),
  createGroupAccessToken: (context) => resourceTokens.create(context, group(context)),
  rotateCurrentGroupAccessToken: (context) => resourceTokens.rotateCurrent(context, 'group'),
  getGroupAccessToken: (context) => resourceTokens.get(context, group(context)),
  revokeGroupAccessToken: (context) => resourceTokens.revoke(context, group(context)),
  rotateGroupAccessToken: (context) => resourceTokens.rotate(context, group(context)),
});
