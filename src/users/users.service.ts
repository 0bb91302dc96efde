import { QueryFailedError, type DataSource, type EntityManager } from 'typeorm';
import type { operations } from '../../generated/openapi.js';
import type { CoreDeps } from '../core/family.js';
import { generateToken, hashToken, type Caller } from '../core/auth.js';
import { activeSql, isAdmin, Visibility } from '../core/abilities.js';
import {
  ApiError,
  badParameter,
  conflict,
  forbidden,
  notFound,
  unauthorized,
  validationFailed,
} from '../core/errors.js';
import { paginateOffset, type Page, type RequestInfo } from '../core/pagination.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import { PersonalAccessToken } from './personal-access-token.entity.js';
import { hashPassword, randomPassword } from './passwords.js';
import { User, type UserProfile } from './user.entity.js';
import { ChangeCache } from '../db/change-cache.js';
import {
  emailErrors,
  nameErrors,
  passwordErrors,
  PROFILE_FIELDS,
  profileFieldErrors,
  projectsLimitErrors,
  publicEmailErrors,
  usernameErrors,
} from './user-validation.js';
import { containing } from '../core/search.js';
import { changeFeed } from '../db/changes.js';
import { preparedQuery } from '../db/prepared.js';
import { entityRows, type EntityRows } from '../db/rows.js';

export interface NewUser {
  username: string;
  name: string;
  email: string;
  admin?: boolean;
  external?: boolean;
  bot?: boolean;
  userType?: User['userType'];
  state?: User['state'];
  createdById?: number | null;
  profile?: UserProfile;
  note?: string | null;
  projectsLimit?: number;
  canCreateGroup?: boolean;
  privateProfile?: boolean;
  /** From hashPassword; null (the default) for users who sign in with tokens only. */
  passwordDigest?: string | null;
  /** Defaults to the time of creation; null leaves the email unconfirmed. */
  confirmedAt?: Date | null;
}

export interface NewToken {
  name: string;
  scopes: string[];
  expiresAt?: string | null;
  /** A token chosen by the operator (FORGE_ROOT_TOKEN); generated otherwise. */
  token?: string;
}

export type ListUsersParams = NonNullable<operations['listUsers']['parameters']['query']>;
export type CreateUserParams = NonNullable<
  operations['createUser']['requestBody']
>['content']['application/json'];
export type UpdateUserParams = NonNullable<
  operations['updateUser']['requestBody']
>['content']['application/json'];

/** A user as one caller sees them. */
export interface UserView {
  user: User;
  /** The caller may read `created_at` and the follow counts (GitLab's `read_user_profile`). */
  profileVisible: boolean;
}

/** What the account shapes (`/user`, administrators' views) add, loaded in batches. */
export interface UserFacts {
  namespaceId: number | null;
  personalProjects: number;
  createdBy: User | null;
}

export interface AccountView extends UserView {
  facts: UserFacts;
}

export type UserList = (Page<AccountView> & { asAdmin: true }) | (Page<UserView> & { asAdmin: false });
export type FoundUser =
  { asAdmin: true; view: AccountView & { highestRole: number } } | { asAdmin: false; view: UserView };

/** GitLab's defaults for a user who is not external (`default_projects_limit`, `can_create_group`). */
const DEFAULT_PROJECTS_LIMIT = 100000;
const DEFAULT_CAN_CREATE_GROUP = true;

/** Non-administrators never find blocked users in lists (GitLab's FORBIDDEN_SEARCH_STATES). */
const HIDDEN_STATES = ['blocked'];
/** GitLab's internal users (ghost, support bot...) are none of these; forge-api has only these. */
const NON_INTERNAL_TYPES = ['human', 'project_bot'];

const ORDER_COLUMNS: Record<NonNullable<ListUsersParams['order_by']>, string> = {
  id: 'u.id',
  name: 'u.name',
  username: 'u.username',
  created_at: 'u.createdAt',
  updated_at: 'u.updatedAt',
};

function uniqueViolation(err: unknown): string | undefined {
  if (!(err instanceof QueryFailedError)) return undefined;
  const driverError = err.driverError as { code?: string; constraint?: string; message?: string };
  if (driverError?.code !== '23505') return undefined;
  return driverError.constraint ?? driverError.message ?? '';
}

export class UsersService {
  private readonly dataSource: DataSource;
  /** The creators in `facts`, read with the users' other facts. */
  private creators?: EntityRows<User>;

  /**
   * `GET /user`'s facts by user id: dropped when the user, their creator or the projects of their
   * namespace change, in any process.
   */
  private readonly currentFacts: ChangeCache<number, UserFacts>;

  constructor(deps: Pick<CoreDeps, 'dataSource' | 'config'>) {
    this.dataSource = deps.dataSource;
    this.currentFacts = new ChangeCache(
      changeFeed(deps.dataSource),
      10_000,
      30_000,
      ['user', 'namespace'],
      (userId, facts, change) =>
        change.kind === 'user'
          ? change.id === userId || change.id === facts.createdBy?.id
          : change.kind === 'namespace' && change.id === facts.namespaceId,
    );
  }

  /** A user and its personal namespace, in one transaction. */
  createUser(attrs: NewUser, manager: EntityManager = this.dataSource.manager): Promise<User> {
    return manager.transaction(async (tx) => {
      const user = await tx.getRepository(User).save(tx.getRepository(User).create(attrs));
      const namespaces = tx.getRepository(Namespace);
      const namespace = await namespaces.save(
        namespaces.create({
          name: user.name,
          path: user.username,
          kind: 'user',
          parentId: null,
          fullPath: user.username,
          fullName: user.name,
          ownerId: user.id,
          visibilityLevel: Visibility.public,
        }),
      );
      await namespaces.update(namespace.id, { traversalIds: [namespace.id] });
      return user;
    });
  }

  /** Stores only the token's digest; the token is returned once. */
  async createToken(
    userId: number,
    attrs: NewToken,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ record: PersonalAccessToken; token: string }> {
    const token = attrs.token ?? generateToken();
    const repository = manager.getRepository(PersonalAccessToken);
    const record = await repository.save(
      repository.create({
        userId,
        name: attrs.name,
        scopes: attrs.scopes,
        expiresAt: attrs.expiresAt ?? null,
        tokenDigest: hashToken(token),
      }),
    );
    return { record, token };
  }

  personalNamespace(
    userId: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Namespace | null> {
    return manager.getRepository(Namespace).findOne({ where: { ownerId: userId, kind: 'user' } });
  }

  /** The caller, with the facts of the account shapes. With sudo, the impersonated user. */
  async current(caller: Caller): Promise<{ asAdmin: boolean; view: AccountView }> {
    const user = caller.user;
    if (!user) throw unauthorized();
    let facts = this.currentFacts.get(user.id);
    if (!facts) {
      const mark = this.currentFacts.mark();
      facts = (await this.facts([user])).get(user.id)!;
      this.currentFacts.set(user.id, facts, mark);
    }
    return { asAdmin: user.admin, view: { user, profileVisible: true, facts } };
  }

  async list(caller: Caller, params: ListUsersParams, request: RequestInfo): Promise<UserList> {
    const admin = isAdmin(caller);
    // Anonymous callers may look one user up by username, never list the instance.
    if (!caller.user && !params.username) throw forbidden('Not authorized to access /api/v4/users');
    const query = this.dataSource.getRepository(User).createQueryBuilder('u');
    if (!admin) query.andWhere('u.state NOT IN (:...hiddenStates)', { hiddenStates: HIDDEN_STATES });
    if (params.username)
      query.andWhere('lower(u.username) = lower(:username)', { username: params.username });
    if (params.active) query.andWhere(`u.state = 'active'`);
    if (params.exclude_active) query.andWhere(`u.state <> 'active'`);
    if (params.blocked) query.andWhere(`u.state = 'blocked'`);
    if (params.external) query.andWhere('u.external = TRUE');
    if (params.exclude_external) query.andWhere('u.external = FALSE');
    if (params.humans) query.andWhere(`u.user_type = 'human'`);
    if (params.exclude_humans) query.andWhere(`u.user_type <> 'human'`);
    if (params.exclude_internal)
      query.andWhere('u.user_type IN (:...nonInternal)', { nonInternal: NON_INTERNAL_TYPES });
    if (params.without_project_bots) query.andWhere(`u.user_type <> 'project_bot'`);
    if (params.created_after)
      query.andWhere('u.created_at >= :createdAfter', { createdAfter: params.created_after });
    if (params.created_before)
      query.andWhere('u.created_at <= :createdBefore', { createdBefore: params.created_before });
    if (admin && params.admins) query.andWhere('u.admin = TRUE');
    // No user has two-factor authentication here.
    if (admin && params.two_factor === 'enabled') query.andWhere('FALSE');

    const term = (params.search ?? '').trim().replace(/^@/, '').toLowerCase();
    if (term) {
      const matches = [
        'u.name ILIKE :pattern',
        'u.username ILIKE :pattern',
        `lower(u.profile->>'public_email') = :term`,
        ...(admin ? ['lower(u.email) = :term'] : []),
      ];
      query.andWhere(`(${matches.join(' OR ')})`, { pattern: containing(term), term });
    }

    if (admin) {
      const direction = (params.sort ?? 'desc').toUpperCase() as 'ASC' | 'DESC';
      const orderBy = params.order_by ?? 'id';
      query.orderBy(ORDER_COLUMNS[orderBy], direction);
      if (orderBy !== 'id') query.addOrderBy('u.id', direction);
    } else if (term) {
      // GitLab ranks exact matches first (public email, username, name), then orders by name.
      query
        .orderBy(
          `CASE WHEN lower(u.profile->>'public_email') = :term THEN 0
                WHEN lower(u.username) = :term THEN 1
                WHEN lower(u.name) = :term THEN 2
                ELSE 3 END`,
          'ASC',
        )
        .addOrderBy('u.name', 'ASC')
        .addOrderBy('u.id', 'DESC');
    } else {
      query.orderBy('u.id', 'DESC');
    }

    const page = await paginateOffset(query, params, request);
    if (!admin) {
      return {
        asAdmin: false,
        headers: page.headers,
        items: page.items.map((user) => ({ user, profileVisible: false })),
      };
    }
    const facts = await this.facts(page.items);
    return {
      asAdmin: true,
      headers: page.headers,
      items: page.items.map((user) => ({ user, profileVisible: true, facts: facts.get(user.id)! })),
    };
  }

  /** One user by id. GitLab requires a signed-in caller here, and answers 403 to anyone else. */
  async find(caller: Caller, id: number): Promise<FoundUser> {
    const viewer = caller.user;
    if (!viewer) throw forbidden('Not authorized!');
    const user = await this.dataSource.getRepository(User).findOne({ where: { id } });
    if (!user) throw notFound('User');
    if (isAdmin(caller)) {
      const [facts, highestRole] = await Promise.all([this.facts([user]), this.highestRole(user.id)]);
      return { asAdmin: true, view: { user, profileVisible: true, facts: facts.get(user.id)!, highestRole } };
    }
    const restricted = user.privateProfile || user.state === 'blocked' || user.confirmedAt === null;
    return { asAdmin: false, view: { user, profileVisible: viewer.id === user.id || !restricted } };
  }

  async create(caller: Caller, params: CreateUserParams): Promise<AccountView> {
    this.requireAdmin(caller);
    if (
      params.password === undefined &&
      params.reset_password === undefined &&
      params.force_random_password === undefined
    ) {
      throw badParameter(
        'password, reset_password, force_random_password are missing, at least one parameter must be provided',
      );
    }
    const password =
      params.reset_password || params.force_random_password ? randomPassword() : params.password;
    const external = params.external ?? false;
    const errors: Record<string, string[]> = {
      email: emailErrors(params.email),
      password: passwordErrors(password),
      name: nameErrors(params.name),
      username: usernameErrors(params.username),
      ...this.attributeErrors(params, params.email),
    };

    const user = await this.dataSource.transaction(async (tx) => {
      await this.checkTaken(tx, { email: params.email, username: params.username });
      await this.checkNamespacePath(tx, params.username, null, errors);
      throwIfInvalid(errors);
      try {
        return await this.createUser(
          {
            username: params.username,
            name: params.name,
            email: params.email,
            admin: params.admin ?? false,
            external,
            createdById: caller.user!.id,
            profile: mergeProfile({}, params),
            note: params.note ?? null,
            // External users may create neither projects nor groups, whatever was asked.
            projectsLimit: external ? 0 : (params.projects_limit ?? DEFAULT_PROJECTS_LIMIT),
            canCreateGroup: external ? false : (params.can_create_group ?? DEFAULT_CAN_CREATE_GROUP),
            privateProfile: params.private_profile ?? false,
            passwordDigest: await hashPassword(password!),
            confirmedAt: params.skip_confirmation ? new Date() : null,
          },
          tx,
        );
      } catch (err) {
        throw takenError(err) ?? err;
      }
    });
    return this.accountView(user);
  }

  async update(caller: Caller, id: number, params: UpdateUserParams): Promise<AccountView> {
    this.requireAdmin(caller);
    const saved = await this.dataSource.transaction(async (tx) => {
      const users = tx.getRepository(User);
      const user = await users
        .createQueryBuilder('u')
        .where('u.id = :id', { id })
        .setLock('pessimistic_write')
        .getOne();
      if (!user) throw notFound('User');
      await this.checkTaken(tx, { email: params.email, username: params.username }, user.id);

      const email = params.email ?? user.email;
      const errors: Record<string, string[]> = {
        ...(params.email !== undefined ? { email: emailErrors(params.email) } : {}),
        ...(params.password !== undefined ? { password: passwordErrors(params.password) } : {}),
        ...(params.name !== undefined ? { name: nameErrors(params.name) } : {}),
        ...(params.username !== undefined ? { username: usernameErrors(params.username) } : {}),
        ...this.attributeErrors(params, email),
      };
      // A new email must still own the public one kept from before.
      if (params.public_email === undefined && params.email !== undefined)
        errors.public_email = publicEmailErrors(user.profile?.public_email, email);
      const renamed = params.username !== undefined && params.username !== user.username;
      const namespace = await this.personalNamespace(user.id, tx);
      if (renamed) await this.checkNamespacePath(tx, params.username!, namespace?.id ?? null, errors);
      throwIfInvalid(errors);

      const externalChanged = params.external !== undefined && params.external !== user.external;
      Object.assign(user, {
        email,
        name: params.name ?? user.name,
        username: params.username ?? user.username,
        admin: params.admin ?? user.admin,
        external: params.external ?? user.external,
        profile: mergeProfile(user.profile ?? {}, params),
        note: params.note ?? user.note,
        projectsLimit: params.projects_limit ?? user.projectsLimit,
        canCreateGroup: params.can_create_group ?? user.canCreateGroup,
        privateProfile: params.private_profile === undefined ? user.privateProfile : !!params.private_profile,
      });
      // As GitLab's ensure_user_rights_and_limits: only when `external` changes.
      if (externalChanged && user.external) {
        user.projectsLimit = 0;
        user.canCreateGroup = false;
      } else if (externalChanged) {
        if (params.projects_limit === undefined) user.projectsLimit = DEFAULT_PROJECTS_LIMIT;
        if (params.can_create_group === undefined) user.canCreateGroup = DEFAULT_CAN_CREATE_GROUP;
      }
      // Left unset, the digest (never selected) is not written.
      if (params.password !== undefined) user.passwordDigest = await hashPassword(params.password);

      try {
        await users.save(user);
        if (namespace && (renamed || namespace.name !== user.name)) {
          // A personal namespace is top-level: its full path is its path, its full name its name.
          await tx.getRepository(Namespace).update(namespace.id, {
            path: user.username,
            fullPath: user.username,
            name: user.name,
            fullName: user.name,
          });
        }
      } catch (err) {
        throw takenError(err) ?? err;
      }
      return user;
    });
    return this.accountView(saved);
  }

  /** `true` once blocked; null when the user already was, as GitLab answers. */
  async block(caller: Caller, id: number): Promise<true | null> {
    this.requireAdmin(caller);
    const user = await this.dataSource.getRepository(User).findOne({ where: { id } });
    if (!user) throw notFound('User');
    if (user.id === caller.user!.id) throw forbidden('The API initiating user cannot be blocked by the API');
    const result = await this.dataSource
      .getRepository(User)
      .update({ id, state: 'active' }, { state: 'blocked' });
    return result.affected ? true : null;
  }

  /** `true` once active again; `false` when the user was not blocked, as GitLab answers. */
  async unblock(caller: Caller, id: number): Promise<boolean> {
    this.requireAdmin(caller);
    const user = await this.dataSource.getRepository(User).findOne({ where: { id } });
    if (!user) throw notFound('User');
    const result = await this.dataSource
      .getRepository(User)
      .update({ id, state: 'blocked' }, { state: 'active' });
    return Boolean(result.affected);
  }

  private requireAdmin(caller: Caller): void {
    if (!caller.user) throw unauthorized();
    if (!isAdmin(caller)) throw forbidden();
  }

  private async accountView(user: User): Promise<AccountView> {
    const facts = await this.facts([user]);
    return { user, profileVisible: true, facts: facts.get(user.id)! };
  }

  /** Personal namespaces, personal project counts and creators of many users, in one statement. */
  private async facts(users: User[]): Promise<Map<number, UserFacts>> {
    const facts = new Map<number, UserFacts>();
    if (users.length === 0) return facts;
    this.creators ??= entityRows(this.dataSource, User, 'c');
    const rows = await preparedQuery(
      this.dataSource,
      `SELECT x.id AS user_id, n.id AS namespace_id,
         (SELECT count(*) FROM projects p WHERE p.namespace_id = n.id) AS projects, ${this.creators.select}
       FROM unnest($1::int[], $2::int[]) AS x (id, created_by_id)
       LEFT JOIN namespaces n ON n.kind = 'user' AND n.owner_id = x.id
       LEFT JOIN users c ON c.id = x.created_by_id`,
      [users.map((u) => u.id), users.map((u) => u.createdById)],
    );
    const byUser = new Map(rows.map((row) => [Number(row.user_id), row]));
    for (const user of users) {
      const row = byUser.get(user.id);
      facts.set(user.id, {
        namespaceId: row?.namespace_id == null ? null : Number(row.namespace_id),
        personalProjects: row?.namespace_id == null ? 0 : Number(row.projects),
        createdBy: row ? this.creators.hydrate(row) : null,
      });
    }
    return facts;
  }

  /** The highest access level the user holds anywhere, 0 for none. */
  private async highestRole(userId: number): Promise<number> {
    const rows: Array<{ level: number | null }> = await this.dataSource.query(
      `SELECT max(access_level) AS level FROM members
       WHERE user_id = $1 AND ${activeSql('members')}`,
      [userId],
    );
    return Number(rows[0]?.level ?? 0);
  }

  /** Errors of the optional attributes shared by creation and update. */
  private attributeErrors(params: UpdateUserParams, email: string): Record<string, string[]> {
    const errors: Record<string, string[]> = {};
    for (const field of PROFILE_FIELDS) {
      const value = params[field];
      if (typeof value === 'string') errors[field] = profileFieldErrors(field, value);
    }
    if (params.public_email !== undefined)
      errors.public_email = publicEmailErrors(params.public_email, email);
    if (params.projects_limit !== undefined)
      errors.projects_limit = projectsLimitErrors(params.projects_limit);
    return errors;
  }

  /** GitLab checks email before username, and answers 409 for either before any validation error. */
  private async checkTaken(
    tx: EntityManager,
    wanted: { email?: string; username?: string },
    exceptId?: number,
  ): Promise<void> {
    const users = tx.getRepository(User);
    const taken = async (column: 'email' | 'username', value: string) => {
      const query = users.createQueryBuilder('u').where(`lower(u.${column}) = lower(:value)`, { value });
      if (exceptId !== undefined) query.andWhere('u.id <> :exceptId', { exceptId });
      return (await query.getCount()) > 0;
    };
    if (wanted.email && (await taken('email', wanted.email))) throw conflict('Email has already been taken');
    if (wanted.username && (await taken('username', wanted.username)))
      throw conflict('Username has already been taken');
  }

  /** A username is also a top-level namespace path, which a group may already hold. */
  private async checkNamespacePath(
    tx: EntityManager,
    username: string,
    ownNamespaceId: number | null,
    errors: Record<string, string[]>,
  ): Promise<void> {
    if (!username) return;
    const query = tx
      .getRepository(Namespace)
      .createQueryBuilder('n')
      .where('lower(n.full_path) = lower(:username)', { username });
    if (ownNamespaceId !== null) query.andWhere('n.id <> :ownNamespaceId', { ownNamespaceId });
    if ((await query.getCount()) > 0)
      errors.username = [...(errors.username ?? []), 'has already been taken'];
  }
}

function throwIfInvalid(errors: Record<string, string[]>): void {
  const failed = Object.fromEntries(Object.entries(errors).filter(([, messages]) => messages.length > 0));
  if (Object.keys(failed).length) throw validationFailed(failed);
}

/** A concurrent request took the email, username or path between our check and the write. */
function takenError(err: unknown): ApiError | undefined {
  const violated = uniqueViolation(err);
  if (violated === undefined) return undefined;
  if (violated.includes('users_email')) return conflict('Email has already been taken');
  if (violated.includes('users_username')) return conflict('Username has already been taken');
  if (violated.includes('namespaces')) return validationFailed({ username: ['has already been taken'] });
  return undefined;
}

/** The stored profile with the given fields applied; an empty public email shows none. */
function mergeProfile(profile: UserProfile, params: UpdateUserParams): UserProfile {
  const merged: UserProfile = { ...profile };
  for (const field of PROFILE_FIELDS) {
    const value = params[field];
    if (value !== undefined) merged[field] = value;
  }
  if (params.public_email !== undefined) merged.public_email = params.public_email || null;
  return merged;
}
