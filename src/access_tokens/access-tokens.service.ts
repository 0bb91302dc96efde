import crypto from 'node:crypto';
import type { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import type { operations } from '../../generated/openapi.js';
import type { Config } from '../config.js';
import { canGroup, canProject, isAdmin, mayGrantLevel, type Subject } from '../core/abilities.js';
import { generateToken, hashToken, type Caller } from '../core/auth.js';
import {
  ApiError,
  forbidden,
  methodNotAllowed,
  notFound,
  unauthorized,
  unprocessable,
} from '../core/errors.js';
import { paginateOffset, type Page, type RequestInfo } from '../core/pagination.js';
import { Member, type MemberSourceType } from '../members/member.entity.js';
import { AccessLevel } from '../core/access-level.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { PersonalAccessToken } from '../users/personal-access-token.entity.js';
import { User } from '../users/user.entity.js';
import type { IssuedToken, ResourceToken } from './access-token.presenter.js';
import {
  MAX_LIFETIME_DAYS,
  PERSONAL_SCOPES,
  RESOURCE_SCOPES,
  ROTATION_LIFETIME_DAYS,
  SELF_SERVICE_SCOPES,
  addDays,
  expiryErrors,
  parseScopes,
  parseTimeFilter,
  toSentence,
  tokenErrors,
  utcToday,
} from './token-rules.js';
import { containing } from '../core/search.js';
import type { GroupView } from '../groups/groups.service.js';
import type { ProjectView } from '../projects/projects.service.js';

type ListPersonalParams = NonNullable<operations['listPersonalAccessTokens']['parameters']['query']>;
/** The filters every token list takes. */
export type TokenFilters = Omit<ListPersonalParams, 'user_id'>;
export type ResourceKind = 'project' | 'group';

/** The project or group whose tokens an operation manages, as the pipeline resolved it. */
export type ResourceRef = { kind: 'project'; view: ProjectView } | { kind: 'group'; view: GroupView };

export interface NewTokenBody {
  name: string;
  description?: string;
  scopes: string[];
  expires_at?: string;
}
export interface NewResourceTokenBody extends NewTokenBody {
  access_level?: number;
}

/** A project or group as the token rules see it. */
interface Resource {
  kind: ResourceKind;
  id: number;
  sourceType: MemberSourceType;
  subject: Subject;
}

/** GitLab's `bad_request!(reason)`. */
const badRequest = (reason: string) => new ApiError(400, { message: `400 Bad request - ${reason}` });

const SORTS: Record<string, [column: string, direction: 'ASC' | 'DESC']> = {
  created_asc: ['t.created_at', 'ASC'],
  created_desc: ['t.created_at', 'DESC'],
  expires_asc: ['t.expires_at', 'ASC'],
  expires_desc: ['t.expires_at', 'DESC'],
  last_used_asc: ['t.last_used_at', 'ASC'],
  last_used_desc: ['t.last_used_at', 'DESC'],
  name_asc: ['t.name', 'ASC'],
  name_desc: ['t.name', 'DESC'],
};

function requireUser(caller: Caller): User {
  if (!caller.user) throw unauthorized();
  return caller.user;
}

/**
 * A new token's attributes, validated: expiry defaults to the longest lifetime allowed. Personal tokens
 * report failures as 422, resource tokens as 400, each with GitLab's sentence.
 */
function newTokenAttributes(
  body: { name: string; description?: string | null; expires_at?: string },
  scopes: string[],
  refuse: (sentence: string) => Error,
) {
  const today = utcToday();
  const attrs = {
    name: body.name,
    description: body.description ?? null,
    scopes,
    expiresAt: body.expires_at ?? addDays(today, MAX_LIFETIME_DAYS),
  };
  const errors = tokenErrors(attrs, today);
  if (errors.length) throw refuse(toSentence(errors));
  return attrs;
}

/**
 * Personal access tokens, and project and group access tokens with their bot users. Every token is a
 * row of personal_access_tokens; a resource token belongs to a `project_bot` user who is a member of
 * exactly one project or group, and that membership is what ties the token to it.
 */
export class AccessTokensService {
  private readonly dataSource: DataSource;
  private readonly config: Config;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'projects' | 'groups' | 'users'>,
  ) {
    this.dataSource = deps.dataSource;
    this.config = deps.config;
  }

  // Personal access tokens

  async listPersonal(caller: Caller, params: ListPersonalParams, request: RequestInfo) {
    const user = requireUser(caller);
    const admin = isAdmin(caller);
    const query = this.tokens();
    if (params.user_id !== undefined) {
      // As GitLab: a non-administrator naming anyone but themselves is unauthorized.
      if (!admin && params.user_id !== user.id) throw unauthorized();
      if (admin && !(await this.dataSource.getRepository(User).existsBy({ id: params.user_id })))
        throw notFound();
      query.andWhere('t.user_id = :userId', { userId: params.user_id });
    } else if (!admin) query.andWhere('t.user_id = :userId', { userId: user.id });
    return paginateOffset(this.filtered(query, params), params, request);
  }

  /** Own tokens for everyone, any token for administrators; others' tokens are unauthorized, as in GitLab. */
  async getPersonal(caller: Caller, id: number): Promise<PersonalAccessToken> {
    const user = requireUser(caller);
    const token = await this.dataSource.getRepository(PersonalAccessToken).findOneBy({ id });
    if (token && (isAdmin(caller) || token.userId === user.id)) return token;
    throw isAdmin(caller) ? notFound() : unauthorized();
  }

  async getCurrent(caller: Caller): Promise<PersonalAccessToken> {
    return this.currentToken(caller);
  }

  async revokePersonal(caller: Caller, id: number): Promise<void> {
    const user = requireUser(caller);
    const token = await this.dataSource.getRepository(PersonalAccessToken).findOneBy({ id });
    if (!token) throw notFound();
    if (!isAdmin(caller) && token.userId !== user.id) throw badRequest('Not permitted to revoke');
    await this.revoke(token.id);
  }

  async revokeCurrent(caller: Caller): Promise<void> {
    await this.revoke((await this.currentToken(caller)).id);
  }

  async rotatePersonal(caller: Caller, id: number, expiresAt?: string): Promise<IssuedToken> {
    const user = requireUser(caller);
    const token = await this.dataSource.getRepository(PersonalAccessToken).findOneBy({ id });
    if (!token || (!isAdmin(caller) && token.userId !== user.id))
      throw isAdmin(caller) ? notFound() : unauthorized();
    return this.rotate(caller, token, expiresAt);
  }

  async rotateCurrent(caller: Caller, expiresAt?: string): Promise<IssuedToken> {
    return this.rotate(caller, await this.currentToken(caller), expiresAt);
  }

  async createForUser(caller: Caller, userId: number, body: NewTokenBody): Promise<IssuedToken> {
    if (!isAdmin(caller)) throw forbidden();
    const owner = await this.dataSource.getRepository(User).findOneBy({ id: userId });
    if (!owner) throw notFound('User');
    return this.createPersonal(owner, body, PERSONAL_SCOPES);
  }

  async createForCaller(caller: Caller, body: NewTokenBody): Promise<IssuedToken> {
    return this.createPersonal(requireUser(caller), body, SELF_SERVICE_SCOPES);
  }

  private async createPersonal(
    owner: User,
    body: NewTokenBody,
    allowedScopes: readonly string[],
  ): Promise<IssuedToken> {
    const attrs = newTokenAttributes(body, parseScopes(body.scopes, allowedScopes), unprocessable);
    return this.insertToken(this.dataSource.manager, { ...attrs, userId: owner.id, previousTokenId: null });
  }

  // Project and group access tokens

  async listResource(
    caller: Caller,
    ref: ResourceRef,
    params: TokenFilters,
    request: RequestInfo,
  ): Promise<Page<ResourceToken>> {
    const resource = this.resourceOf(ref);
    const page = await paginateOffset(this.filtered(this.resourceTokens(resource), params), params, request);
    const levels = await this.botLevels(
      resource,
      page.items.map((token) => token.userId),
    );
    return {
      headers: page.headers,
      items: page.items.map((token) => ({ token, accessLevel: levels.get(token.userId) ?? 0 })),
    };
  }

  async getResource(caller: Caller, ref: ResourceRef, tokenId: number) {
    const resource = this.resourceOf(ref);
    const found = await this.findResourceToken(resource, tokenId);
    if (!found) throw notFound(`${ref.kind} Access Token`);
    return found;
  }

  async createResource(
    caller: Caller,
    ref: ResourceRef,
    body: NewResourceTokenBody,
  ): Promise<ResourceToken & { secret: string }> {
    const user = requireUser(caller);
    const { kind } = ref;
    // Parameters are checked before anything else, as Grape does.
    const scopes = parseScopes(body.scopes, RESOURCE_SCOPES);
    const resource = this.resourceOf(ref);
    // Bots never create tokens: a token cannot mint further tokens.
    if (user.userType === 'project_bot' || !this.canManage(caller, resource))
      throw badRequest(`User does not have permission to create ${kind} access token`);
    const accessLevel = body.access_level ?? AccessLevel.Maintainer;
    if (!mayGrantLevel(caller, resource.subject, accessLevel))
      throw badRequest('Access level of the token contains permissions not held by the creating user');
    const attrs = newTokenAttributes(body, scopes, badRequest);

    const username = `${kind}_${resource.id}_bot_${crypto.randomBytes(16).toString('hex')}`;
    const host = new URL(this.config.externalUrl).hostname;
    return this.dataSource.transaction(async (tx) => {
      const bot = await this.services.users.createUser(
        {
          username,
          name: attrs.name,
          email: `${username}@noreply.${host}`,
          bot: true,
          userType: 'project_bot',
          external: user.external,
        },
        tx,
      );
      await tx.getRepository(Member).insert({
        sourceType: resource.sourceType,
        sourceId: resource.id,
        userId: bot.id,
        accessLevel,
        createdById: user.id,
      });
      const issued = await this.insertToken(tx, { ...attrs, userId: bot.id, previousTokenId: null });
      return { ...issued, accessLevel };
    });
  }

  async revokeResource(caller: Caller, ref: ResourceRef, tokenId: number) {
    const user = requireUser(caller);
    const resource = this.resourceOf(ref);
    const found = await this.findResourceToken(resource, tokenId);
    if (!found) throw notFound(`${ref.kind} Access Token`);
    if (!this.canManage(caller, resource)) {
      const bot = await this.dataSource.getRepository(User).findOneByOrFail({ id: found.token.userId });
      throw badRequest(`${user.name} cannot delete ${bot.name}`);
    }
    // The bot keeps its membership: it is what ties the revoked token to the project or group.
    await this.revoke(found.token.id);
  }

  async rotateResource(
    caller: Caller,
    ref: ResourceRef,
    tokenId: number,
    expiresAt?: string,
  ): Promise<ResourceToken & { secret: string }> {
    const resource = this.resourceOf(ref);
    const found = await this.findResourceToken(resource, tokenId);
    if (!found) throw isAdmin(caller) ? notFound() : unauthorized();
    const issued = await this.rotate(caller, found.token, expiresAt, () => {
      if (!mayGrantLevel(caller, resource.subject, found.accessLevel))
        throw badRequest('Not eligible to rotate tokens with permissions not held by the user');
    });
    return { ...issued, accessLevel: found.accessLevel };
  }

  /** A bot's token rotating itself; a human's token has no business here (405, as in GitLab). */
  async rotateCurrentResource(
    caller: Caller,
    kind: ResourceKind,
    id: string | number,
    expiresAt?: string,
  ): Promise<ResourceToken & { secret: string }> {
    const user = requireUser(caller);
    const token = await this.currentToken(caller);
    if (user.userType !== 'project_bot' || token.userId !== user.id) throw methodNotAllowed();
    const resource = await this.resource(caller, kind, id);
    const found = await this.findResourceToken(resource, token.id);
    if (!found) throw unauthorized();
    const issued = await this.rotate(caller, found.token, expiresAt);
    return { ...issued, accessLevel: found.accessLevel };
  }

  // Shared steps

  private tokens(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(PersonalAccessToken).createQueryBuilder('t');
  }

  /** The token that authenticated the request, as stored now. */
  private async currentToken(caller: Caller): Promise<PersonalAccessToken> {
    requireUser(caller);
    const token = caller.token
      ? await this.dataSource.getRepository(PersonalAccessToken).findOneBy({ id: caller.token.id })
      : null;
    if (!token) throw unauthorized();
    return token;
  }

  private async revoke(id: number): Promise<void> {
    await this.dataSource.getRepository(PersonalAccessToken).update({ id }, { revoked: true });
  }

  /**
   * Revokes `token` and issues its successor (same user, name, description and scopes) in one
   * transaction. `check` runs GitLab's extra eligibility rule after the revoked check.
   */
  private async rotate(
    caller: Caller,
    token: PersonalAccessToken,
    expiresAt: string | undefined,
    check?: () => void,
  ): Promise<IssuedToken> {
    if (token.revoked) {
      // A revoked token presented again may have leaked: its successors go too.
      await this.revokeFamily(token.id);
      throw badRequest('Token already revoked');
    }
    check?.();
    const today = utcToday();
    const expiry = expiresAt ?? addDays(today, ROTATION_LIFETIME_DAYS);
    const errors = expiryErrors(expiry, today);
    if (errors.length) throw badRequest(toSentence(errors));
    return this.dataSource.transaction(async (tx) => {
      const revoked = await this.tokens(tx)
        .update()
        .set({ revoked: true })
        .where('id = :id AND revoked = false', { id: token.id })
        .execute();
      // Another request rotated or revoked it first.
      if (!revoked.affected) throw badRequest('Token already revoked');
      const issued = await this.insertToken(tx, {
        userId: token.userId,
        name: token.name,
        description: token.description,
        scopes: token.scopes,
        expiresAt: expiry,
        previousTokenId: token.id,
      });
      // A bot takes on the rotating user's external status, as in GitLab.
      await tx
        .getRepository(User)
        .update({ id: token.userId, userType: 'project_bot' }, { external: caller.user?.external ?? false });
      return issued;
    });
  }

  /** Every token rotated, directly or not, from `id`. */
  private async revokeFamily(id: number): Promise<void> {
    await this.dataSource.query(
      `WITH RECURSIVE family AS (
         SELECT id FROM personal_access_tokens WHERE previous_token_id = $1
         UNION SELECT t.id FROM personal_access_tokens t JOIN family f ON t.previous_token_id = f.id
       )
       UPDATE personal_access_tokens SET revoked = true WHERE id IN (SELECT id FROM family) AND revoked = false`,
      [id],
    );
  }

  private async insertToken(
    manager: EntityManager,
    attrs: Pick<
      PersonalAccessToken,
      'userId' | 'name' | 'description' | 'scopes' | 'expiresAt' | 'previousTokenId'
    >,
  ): Promise<IssuedToken> {
    const secret = generateToken();
    const repository = manager.getRepository(PersonalAccessToken);
    const token = await repository.save(
      repository.create({ ...attrs, tokenDigest: hashToken(secret), revoked: false, lastUsedAt: null }),
    );
    return { token, secret };
  }

  /** Applies the list filters and order shared by every token list. */
  private filtered(query: SelectQueryBuilder<PersonalAccessToken>, params: TokenFilters) {
    const today = utcToday();
    if (params.revoked !== undefined) query.andWhere('t.revoked = :revoked', { revoked: params.revoked });
    if (params.state === 'active')
      query.andWhere('t.revoked = false AND (t.expires_at IS NULL OR t.expires_at > :today)', { today });
    if (params.state === 'inactive')
      query.andWhere('(t.revoked = true OR t.expires_at <= :today)', { today });
    const times = [
      ['created_before', 't.created_at <='],
      ['created_after', 't.created_at >='],
      ['last_used_before', 't.last_used_at <='],
      ['last_used_after', 't.last_used_at >='],
    ] as const;
    for (const [name, condition] of times) {
      const value = params[name];
      if (value !== undefined)
        query.andWhere(`${condition} :${name}`, { [name]: parseTimeFilter(name, value) });
    }
    if (params.expires_before)
      query.andWhere('t.expires_at < :expiresBefore', { expiresBefore: params.expires_before });
    if (params.expires_after)
      query.andWhere('t.expires_at >= :expiresAfter', { expiresAfter: params.expires_after });
    if (params.search) {
      // GitLab's fuzzy search: terms under three characters must match the whole name.
      if (params.search.length >= 3)
        query.andWhere('t.name ILIKE :search', { search: containing(params.search) });
      else query.andWhere('lower(t.name) = lower(:search)', { search: params.search });
    }
    const sort = params.sort ? SORTS[params.sort] : undefined;
    if (sort) query.orderBy(sort[0], sort[1]).addOrderBy('t.id', sort[1]);
    else query.orderBy('t.id', 'ASC');
    return query;
  }

  /** The project or group by id (for a bot rotating its own token, whose route resolves nothing). */
  private async resource(caller: Caller, kind: ResourceKind, id: string | number): Promise<Resource> {
    return kind === 'project'
      ? this.resourceOf({ kind, view: await this.services.projects.find(caller, id) })
      : this.resourceOf({ kind, view: await this.services.groups.find(caller, id) });
  }

  private resourceOf(ref: ResourceRef): Resource {
    if (ref.kind === 'project') {
      const { project, accessLevel } = ref.view;
      return {
        kind: ref.kind,
        id: project.id,
        sourceType: 'Project',
        subject: {
          visibilityLevel: project.visibilityLevel,
          accessLevel,
          archived: project.archived,
        },
      };
    }
    const { group, subject } = ref.view;
    return { kind: ref.kind, id: group.id, sourceType: 'Namespace', subject };
  }

  private canManage(caller: Caller, resource: Resource): boolean {
    return resource.kind === 'project'
      ? canProject(caller, 'admin_project_access_token', resource.subject)
      : canGroup(caller, 'admin_group_access_token', resource.subject);
  }

  /** Tokens of the resource's bots: project_bot users with a direct membership of it. */
  private resourceTokens(resource: Resource) {
    return this.tokens().where(
      `EXISTS (SELECT 1 FROM members m JOIN users u ON u.id = m.user_id
         WHERE m.user_id = t.user_id AND m.source_type = :sourceType AND m.source_id = :sourceId
           AND u.user_type = 'project_bot')`,
      { sourceType: resource.sourceType, sourceId: resource.id },
    );
  }

  private async findResourceToken(resource: Resource, tokenId: number): Promise<ResourceToken | null> {
    const token = await this.resourceTokens(resource).andWhere('t.id = :tokenId', { tokenId }).getOne();
    if (!token) return null;
    const levels = await this.botLevels(resource, [token.userId]);
    return { token, accessLevel: levels.get(token.userId) ?? 0 };
  }

  /** The roles of the given bots in the resource, in one query. */
  private async botLevels(resource: Resource, userIds: number[]): Promise<Map<number, number>> {
    const levels = new Map<number, number>();
    if (userIds.length === 0) return levels;
    const members = await this.dataSource
      .getRepository(Member)
      .createQueryBuilder('m')
      .where('m.source_type = :sourceType AND m.source_id = :sourceId', {
        sourceType: resource.sourceType,
        sourceId: resource.id,
      })
      .andWhere('m.user_id IN (:...userIds)', { userIds: [...new Set(userIds)] })
      .getMany();
    for (const member of members) levels.set(member.userId, member.accessLevel);
    return levels;
  }
}
