import { recordId, recordIds } from '../core/ids.js';
import { In, type DataSource, type EntityManager } from 'typeorm';
import type { components, operations } from '../../generated/openapi.js';
import {
  activeSql,
  canGroup,
  canProject,
  groupAccessLevel,
  isAdmin,
  isMemberLevel,
  mayGrantLevel,
  meetsAccessLevel,
  type Subject,
  Visibility,
} from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, badParameter, conflict, forbidden, notFound, validationFailed } from '../core/errors.js';
import { offsetHeaders, pageWindow, type Page, type RequestInfo } from '../core/pagination.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { User } from '../users/user.entity.js';
import { Member, type MemberSourceType } from './member.entity.js';
import { AccessLevel } from '../core/access-level.js';
import type { MemberRecord } from './member.presenter.js';
import { ProjectGroupLink } from './project-group-link.entity.js';
import { containing } from '../core/search.js';
import { isUniqueViolation } from '../db/errors.js';
import type { GroupView } from '../groups/groups.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { MemberRole } from '../member_roles/member-role.entity.js';

export type MemberListParams = NonNullable<operations['listProjectMembers']['parameters']['query']>;
export type MemberCreateParams = components['schemas']['MemberCreate'];
export type MemberUpdateParams = components['schemas']['MemberUpdate'];
export type MemberBatchResult = components['schemas']['MemberBatchResult'];
export type ProjectShareParams = components['schemas']['ProjectShareCreate'];
export type DeleteMemberParams = NonNullable<operations['removeGroupMember']['parameters']['query']>;

/** The project or group an operation is about, as the pipeline resolved it. */
export type SourceRef = { kind: 'project'; view: ProjectView } | { kind: 'group'; view: GroupView };

/** A project or group whose members are read or changed, as one caller sees it. */
interface Source {
  kind: 'project' | 'group';
  type: MemberSourceType;
  id: number;
  /** Groups whose members the source inherits: the project's group and those above it, or the group's ancestors. */
  ancestorIds: number[];
  subject: Subject;
  /** Projects: the user whose personal namespace holds the project, if it is in one. */
  namespaceHolderId: number | null;
}

/** The levels a membership may have (Minimal Access is a Premium feature). */
const VALID_LEVELS: readonly number[] = [
  AccessLevel.Guest,
  AccessLevel.Planner,
  AccessLevel.Reporter,
  AccessLevel.Developer,
  AccessLevel.Maintainer,
  AccessLevel.Owner,
];

const LEVEL_NAMES: Record<number, string> = {
  [AccessLevel.MinimalAccess]: 'Minimal Access',
  [AccessLevel.Guest]: 'Guest',
  [AccessLevel.Planner]: 'Planner',
  [AccessLevel.Reporter]: 'Reporter',
  [AccessLevel.Developer]: 'Developer',
  [AccessLevel.Maintainer]: 'Maintainer',
  [AccessLevel.Owner]: 'Owner',
};

/** GitLab's limit on the users one request may add. */
const BATCH_LIMIT = 100;

const isBot = (user: User) => user.bot || user.userType === 'project_bot';
const today = () => new Date().toISOString().slice(0, 10);

/** `12`, `[12, 13]`, `"12,13"`: the IDs of a filter parameter. */
function idList(value: number[] | string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  return recordIds(value);
}

/** Rails' `to_sentence`: "a", "a and b", "a, b, and c". */
function toSentence(items: string[]): string {
  if (items.length <= 2) return items.join(' and ');
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

/** Record errors keyed by attribute, in Rails' full-message form: "Access level is not included in the list". */
function fullMessages(errors: Record<string, string[]>): string[] {
  const label = (attribute: string) => {
    const words = attribute.replace(/_id$/, '').replace(/_/g, ' ');
    return words.charAt(0).toUpperCase() + words.slice(1);
  };
  return Object.entries(errors).flatMap(([attribute, messages]) =>
    messages.map((message) => `${label(attribute)} ${message}`),
  );
}

interface MemberRow {
  user_id: number;
  member_role_id: number | null;
  access_level: number;
  expires_on: string | null;
  created_at: Date | string;
  created_by_id: number | null;
}

interface Filters {
  query?: string;
  userIds?: number[];
  skipUsers?: number[];
  state?: string;
}

/** Positional SQL arguments, numbered as they are added. */
class Args {
  readonly values: unknown[] = [];
  add(value: unknown, cast = ''): string {
    this.values.push(value);
    return `$${this.values.length}${cast ? `::${cast}` : ''}`;
  }
}

export class MembersService {
  private readonly dataSource: DataSource;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'projects' | 'memberRoles'>,
  ) {
    this.dataSource = deps.dataSource;
  }

  /** The resolved project or group, as the member rules see it. */
  private source(ref: SourceRef): Source {
    if (ref.kind === 'project') {
      const { view } = ref;
      const namespace = view.project.namespace;
      return {
        kind: 'project',
        type: 'Project',
        id: view.project.id,
        ancestorIds: namespace.kind === 'group' ? namespace.traversalIds : [],
        subject: this.services.projects.subject(view),
        namespaceHolderId: namespace.kind === 'user' ? namespace.ownerId : null,
      };
    }
    const { group, subject } = ref.view;
    return {
      kind: 'group',
      type: 'Namespace',
      id: group.id,
      ancestorIds: group.traversalIds.filter((id) => id !== group.id),
      subject,
      namespaceHolderId: null,
    };
  }

  private canAdminMembers(caller: Caller, source: Source): boolean {
    return source.kind === 'project'
      ? canProject(caller, 'admin_project_member', source.subject)
      : canGroup(caller, 'admin_group_member', source.subject);
  }

  /** Giving or taking the Owner role: `manage_owners` in projects; in groups, managing members already needs Owner. */
  private canManageOwners(caller: Caller, source: Source): boolean {
    if (source.kind === 'group') return this.canAdminMembers(caller, source);
    return canProject(caller, 'manage_owners', source.subject);
  }

  // ---- Reading ------------------------------------------------------------------------------------

  /** Direct members (`inherited` false) or everyone with a role (`inherited` true), one page. */
  async list(
    caller: Caller,
    ref: SourceRef,
    params: MemberListParams,
    request: RequestInfo,
    inherited: boolean,
  ): Promise<Page<MemberRecord>> {
    const source = this.source(ref);
    const filters: Filters = {
      query: params.query,
      userIds: idList(params.user_ids),
      skipUsers: idList(params.skip_users),
      state: params.state,
    };
    const { page, perPage, offset } = pageWindow(params);
    const { records, total } = await this.memberships(caller, source, inherited, filters, {
      limit: perPage,
      offset,
    });
    return { items: records, headers: offsetHeaders(total, page, perPage, request) };
  }

  /** One user's direct (or, with `inherited`, effective) membership; 404 `Member Not Found` without one. */
  async get(caller: Caller, ref: SourceRef, userId: number, inherited: boolean): Promise<MemberRecord> {
    const source = this.source(ref);
    const { records } = await this.memberships(
      caller,
      source,
      inherited,
      { userIds: [userId] },
      { limit: 1 },
    );
    if (!records[0]) throw notFound('Member');
    return records[0];
  }

  /**
   * The memberships of a source in SQL: its own, and with `inherited` also those of the groups above it
   * and, for projects, of the groups it is shared with (capped at the share's level), each user once
   * with the highest level. Users and creators are loaded in one batched query.
   */
  private async memberships(
    caller: Caller,
    source: Source,
    inherited: boolean,
    filters: Filters,
    page: { limit: number; offset?: number },
  ): Promise<{ records: MemberRecord[]; total: number }> {
    const args = new Args();
    const type = args.add(source.type);
    const id = args.add(source.id, 'int');
    const own = `m.source_type = ${type} AND m.source_id = ${id}`;
    let candidates: string;
    if (!inherited) {
      candidates = `SELECT m.id, m.user_id, m.access_level, m.expires_at, m.created_at, m.created_by_id,
          m.member_role_id, TRUE AS own, TRUE AS accessible
        FROM members m WHERE ${own} AND ${activeSql('m')}`;
    } else {
      candidates = `SELECT m.id, m.user_id, m.access_level, m.expires_at, m.created_at, m.created_by_id,
          m.member_role_id, (${own}) AS own, TRUE AS accessible
        FROM members m
        WHERE ((${own}) OR (m.source_type = 'Namespace' AND m.source_id = ANY(${args.add(source.ancestorIds, 'int[]')})))
          AND ${activeSql('m')}`;
      if (source.kind === 'project') {
        // Members of a shared group are shown when the caller may know the group, or belongs to the project.
        const admin = args.add(isAdmin(caller), 'boolean');
        const callerId = args.add(caller.user?.id ?? 0, 'int');
        const projectMember = args.add(isMemberLevel(source.subject.accessLevel), 'boolean');
        candidates += `
        UNION ALL
        SELECT m.id, m.user_id, LEAST(m.access_level, s.group_access), LEAST(m.expires_at, s.expires_at),
          m.created_at, m.created_by_id, m.member_role_id, FALSE, s.accessible
        FROM (
          SELECT l.group_access, l.expires_at, g.traversal_ids,
            (g.visibility_level >= ${Visibility.public} OR ${admin} OR EXISTS (
              SELECT 1 FROM members cm WHERE cm.user_id = ${callerId} AND cm.source_type = 'Namespace'
                AND cm.source_id = ANY(g.traversal_ids) AND ${activeSql('cm')})) AS accessible
          FROM project_group_links l JOIN namespaces g ON g.id = l.group_id
          WHERE l.project_id = ${id} AND ${activeSql('l')}
        ) s
        JOIN members m ON m.source_type = 'Namespace' AND m.source_id = ANY(s.traversal_ids) AND ${activeSql('m')}
        WHERE s.accessible OR ${projectMember}`;
      }
    }
    const where: string[] = [];
    if (filters.query) {
      const term = args.add(containing(filters.query));
      where.push(`(u.name ILIKE ${term} OR u.username ILIKE ${term})`);
    }
    if (filters.userIds?.length) where.push(`b.user_id = ANY(${args.add(filters.userIds, 'int[]')})`);
    if (filters.skipUsers?.length)
      where.push(`NOT (b.user_id = ANY(${args.add(filters.skipUsers, 'int[]')}))`);
    // Every membership here is active: nothing waits for a seat.
    if (filters.state === 'awaiting') where.push('FALSE');
    // One row per user: the highest level; on a tie the source's own membership, then the longest-lasting.
    const select = (columns: string) => `WITH candidates AS (${candidates}),
      best AS (
        SELECT DISTINCT ON (c.user_id) c.* FROM candidates c
        ORDER BY c.user_id, c.access_level DESC, c.own DESC, c.expires_at DESC NULLS FIRST, c.created_at ASC
      )
      SELECT ${columns} FROM best b JOIN users u ON u.id = b.user_id
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`;
    const manager = this.dataSource.manager;
    const countArgs = [...args.values];
    const limit = args.add(page.limit, 'int');
    const offset = args.add(page.offset ?? 0, 'bigint');
    const [rows, counted] = await Promise.all([
      manager.query(
        `${select(
          `b.user_id, b.access_level, to_char(b.expires_at, 'YYYY-MM-DD') AS expires_on, b.created_at,
            CASE WHEN b.accessible THEN b.created_by_id END AS created_by_id, b.member_role_id`,
        )} ORDER BY b.id ASC LIMIT ${limit} OFFSET ${offset}`,
        args.values,
      ) as Promise<MemberRow[]>,
      page.offset === undefined
        ? Promise.resolve(null)
        : (manager.query(select('count(*)::int AS total'), countArgs) as Promise<Array<{ total: number }>>),
    ]);
    const records = await this.records(rows);
    return { records, total: counted ? Number(counted[0]?.total ?? 0) : records.length };
  }

  /** Rows to records, with every user and creator loaded in one query. */
  private async records(rows: MemberRow[], manager: EntityManager = this.dataSource.manager) {
    const ids = new Set<number>();
    for (const row of rows) {
      ids.add(Number(row.user_id));
      if (row.created_by_id !== null) ids.add(Number(row.created_by_id));
    }
    const users = ids.size ? await manager.getRepository(User).findBy({ id: In([...ids]) }) : [];
    const byId = new Map(users.map((user) => [user.id, user]));
    const roles = await this.services.memberRoles.byIds(
      [...new Set(rows.flatMap((row) => (row.member_role_id === null ? [] : [Number(row.member_role_id)])))],
      manager,
    );
    return rows.map((row): MemberRecord => ({
      memberRole: row.member_role_id === null ? null : (roles.get(Number(row.member_role_id)) ?? null),
      user: byId.get(Number(row.user_id))!,
      accessLevel: Number(row.access_level),
      createdAt: new Date(row.created_at),
      expiresAt: row.expires_on,
      createdBy: row.created_by_id === null ? null : (byId.get(Number(row.created_by_id)) ?? null),
    }));
  }

  private async directRecord(manager: EntityManager, source: Source, userId: number): Promise<MemberRecord> {
    const rows: MemberRow[] = await manager.query(
      `SELECT m.user_id, m.access_level, to_char(m.expires_at, 'YYYY-MM-DD') AS expires_on, m.created_at,
         m.created_by_id, m.member_role_id
       FROM members m WHERE m.source_type = $1 AND m.source_id = $2 AND m.user_id = $3`,
      [source.type, source.id, userId],
    );
    return (await this.records(rows, manager))[0];
  }

  // ---- Writing ------------------------------------------------------------------------------------

  /** Adds one user (the member) or a comma-separated list (a batch result). */
  async add(
    caller: Caller,
    ref: SourceRef,
    params: MemberCreateParams,
  ): Promise<{ member: MemberRecord } | { batch: MemberBatchResult }> {
    const byId = params.user_id !== undefined && params.user_id !== '';
    const byUsername = params.username !== undefined && params.username !== '';
    if (byId && byUsername) throw badParameter('user_id, username are mutually exclusive');
    if (!byId && !byUsername)
      throw badParameter('user_id, username are missing, at least one parameter must be provided');
    const source = this.source(ref);
    const wanted = String(byId ? params.user_id : params.username);
    const level = params.access_level;
    if (source.kind === 'project' && level === AccessLevel.Owner && !this.canManageOwners(caller, source))
      throw forbidden();
    // A custom role may let a lower member manage members: never above their own level.
    if (!mayGrantLevel(caller, source.subject, level)) throw forbidden();
    const expiresAt = params.expires_at ?? null;
    const memberRoleId = params.member_role_id ?? null;
    if (memberRoleId !== null)
      await this.checkMemberRole(this.dataSource.manager, source, memberRoleId, level);
    if (wanted.includes(',')) {
      return {
        batch: await this.addMany(caller, source, wanted, byId, { level, expiresAt, memberRoleId }),
      };
    }

    const users = this.dataSource.getRepository(User);
    const id = byId ? recordId(wanted.trim()) : undefined;
    const user = byId
      ? id === undefined
        ? null
        : await users.findOneBy({ id })
      : await users
          .createQueryBuilder('u')
          .where('lower(u.username) = lower(:name)', { name: wanted })
          .getOne();
    if (!user) throw notFound('User');
    return this.dataSource.transaction(async (tx) => {
      const existing = await this.existingRows(tx, source, [user.id]);
      const current = existing.get(user.id);
      if (current && current.active) throw conflict('Member already exists');
      const errors = (await this.validate(tx, source, [user], level, expiresAt, true)).get(user.id);
      if (errors) throw validationFailed(errors);
      // An expired membership is gone for GitLab; its row makes room for the new one.
      if (current) await tx.getRepository(Member).delete(current.id);
      try {
        await tx.getRepository(Member).insert({
          sourceType: source.type,
          sourceId: source.id,
          userId: user.id,
          accessLevel: level,
          expiresAt,
          memberRoleId,
          createdById: caller.user?.id ?? null,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict('Member already exists');
        throw err;
      }
      return { member: await this.directRecord(tx, source, user.id) };
    });
  }

  /**
   * A comma-separated list: unknown users are skipped, existing members get the new level, and each
   * user that fails validation is named in the result while the others are added.
   */
  private async addMany(
    caller: Caller,
    source: Source,
    list: string,
    byId: boolean,
    membership: { level: number; expiresAt: string | null; memberRoleId: number | null },
  ): Promise<MemberBatchResult> {
    const { level, expiresAt, memberRoleId } = membership;
    const tokens = [
      ...new Set(
        list
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
      ),
    ];
    if (tokens.length > BATCH_LIMIT)
      return { status: 'error', message: `Too many users specified (limit is ${BATCH_LIMIT})` };
    const query = this.dataSource.getRepository(User).createQueryBuilder('u');
    if (byId) query.where('u.id = ANY(:ids)', { ids: recordIds(tokens) });
    else query.where('lower(u.username) = ANY(:names)', { names: tokens.map((t) => t.toLowerCase()) });
    const found = await query.getMany();
    const key = (user: User) => (byId ? String(user.id) : user.username.toLowerCase());
    const order = new Map(tokens.map((t, i) => [byId ? String(Number(t)) : t.toLowerCase(), i]));
    const users = found.sort((a, b) => order.get(key(a))! - order.get(key(b))!);
    if (users.length === 0) return { status: 'error', message: 'No users specified.' };

    return this.dataSource.transaction(async (tx) => {
      const existing = await this.existingRows(
        tx,
        source,
        users.map((u) => u.id),
      );
      for (const user of users) {
        const row = existing.get(user.id);
        if (row?.active) await this.authorizeUpdate(tx, caller, source, user, row.accessLevel, level);
      }
      const invalid = await this.validate(
        tx,
        source,
        users.filter((u) => !existing.get(u.id)?.active),
        level,
        expiresAt,
        true,
      );
      for (const [userId, errors] of await this.validate(
        tx,
        source,
        users.filter((u) => existing.get(u.id)?.active),
        level,
        expiresAt,
        false,
      ))
        invalid.set(userId, errors);
      const messages: string[] = [];
      const toUpdate: number[] = [];
      const toReplace: number[] = [];
      const toInsert: User[] = [];
      for (const user of users) {
        const errors = invalid.get(user.id);
        const row = existing.get(user.id);
        if (errors) messages.push(`${user.username}: ${toSentence(fullMessages(errors))}`);
        else if (row?.active) toUpdate.push(row.id);
        else {
          if (row) toReplace.push(row.id);
          toInsert.push(user);
        }
      }
      const members = tx.getRepository(Member);
      if (toUpdate.length)
        await members.update({ id: In(toUpdate) }, { accessLevel: level, expiresAt, memberRoleId });
      // Expired memberships are gone for GitLab: their rows make room for the new ones.
      if (toReplace.length) await members.delete({ id: In(toReplace) });
      if (toInsert.length)
        await members.insert(
          toInsert.map((user) => ({
            sourceType: source.type,
            sourceId: source.id,
            userId: user.id,
            accessLevel: level,
            expiresAt,
            memberRoleId,
            createdById: caller.user?.id ?? null,
          })),
        );
      return messages.length ? { status: 'error', message: toSentence(messages) } : { status: 'success' };
    });
  }

  /** Changes a direct membership's level and expiry. */
  async update(
    caller: Caller,
    ref: SourceRef,
    userId: number,
    params: MemberUpdateParams,
  ): Promise<MemberRecord> {
    const source = this.source(ref);
    return this.dataSource.transaction(async (tx) => {
      const { row, user } = await this.findDirect(tx, source, userId);
      await this.authorizeUpdate(tx, caller, source, user, row.accessLevel, params.access_level);
      if (!mayGrantLevel(caller, source.subject, params.access_level)) throw forbidden();
      const expiresAt = params.expires_at === undefined ? row.expiresAt : params.expires_at;
      const memberRoleId = params.member_role_id === undefined ? row.memberRoleId : params.member_role_id;
      if (
        params.member_role_id === undefined &&
        memberRoleId !== null &&
        row.accessLevel !== params.access_level
      )
        throw validationFailed({
          access_level: ['cannot be changed because of an existing association with a custom role'],
        });
      if (memberRoleId !== null && params.member_role_id !== undefined)
        await this.checkMemberRole(tx, source, memberRoleId, params.access_level);
      const errors = (await this.validate(tx, source, [user], params.access_level, expiresAt, false)).get(
        user.id,
      );
      if (errors) throw validationFailed(errors);
      await tx
        .getRepository(Member)
        .update(row.id, { accessLevel: params.access_level, expiresAt, memberRoleId });
      return this.directRecord(tx, source, user.id);
    });
  }

  /** Ends a direct membership; for groups also the user's direct memberships inside, unless told not to. */
  async remove(caller: Caller, ref: SourceRef, userId: number, params: DeleteMemberParams): Promise<void> {
    const source = this.source(ref);
    await this.dataSource.transaction(async (tx) => {
      const { row, user } = await this.findDirect(tx, source, userId);
      const self = caller.user?.id === user.id;
      if (source.kind === 'project') {
        if (source.namespaceHolderId === user.id) throw forbidden();
        if (!self && !(this.canAdminMembers(caller, source) && !isBot(user))) throw forbidden();
        if (row.accessLevel === AccessLevel.Owner && !this.canManageOwners(caller, source)) throw forbidden();
      } else {
        if (await this.isLastOwner(tx, source, user.id, row.accessLevel)) throw forbidden();
        if (!self && !(this.canAdminMembers(caller, source) && !isBot(user))) throw forbidden();
      }
      await tx.getRepository(Member).delete(row.id);
      if (source.kind === 'group' && !params.skip_subresources) {
        await tx.query(
          `DELETE FROM members m WHERE m.user_id = $2 AND (
             (m.source_type = 'Namespace' AND m.source_id IN (
               SELECT d.id FROM namespaces d WHERE d.traversal_ids @> ARRAY[$1::int] AND d.id <> $1))
             OR (m.source_type = 'Project' AND m.source_id IN (
               SELECT p.id FROM projects p JOIN namespaces n ON n.id = p.namespace_id
               WHERE n.traversal_ids @> ARRAY[$1::int])))`,
          [source.id, user.id],
        );
      }
    });
  }

  /**
   * A custom role a membership of the source may carry: an instance role or one of the source's
   * top-level group, whose base level is the membership's; GitLab's 400s otherwise.
   */
  private async checkMemberRole(
    manager: EntityManager,
    source: Source,
    memberRoleId: number,
    level: number,
  ): Promise<MemberRole> {
    const rootGroupId = source.ancestorIds[0] ?? (source.kind === 'group' ? source.id : null);
    const role = await this.services.memberRoles.assignable(manager, memberRoleId, rootGroupId);
    if (!role) throw validationFailed({ member_role: ['not found'] });
    if (role.baseAccessLevel !== level)
      throw validationFailed({
        member_role_id: ["role's base access level does not match the access level of the membership"],
      });
    return role;
  }

  /** The direct, unexpired membership of `userId`; 404 `Member Not Found` without one. */
  private async findDirect(tx: EntityManager, source: Source, userId: number) {
    const row = await tx
      .getRepository(Member)
      .createQueryBuilder('m')
      .innerJoinAndSelect('m.user', 'u')
      .where('m.source_type = :type AND m.source_id = :id AND m.user_id = :userId', {
        type: source.type,
        id: source.id,
        userId,
      })
      .andWhere(activeSql('m'))
      .setLock('pessimistic_write', undefined, ['m'])
      .getOne();
    if (!row) throw notFound('Member');
    return { row, user: row.user! };
  }

  /**
   * GitLab's `update_*_member` policy: managers may change members, but not the holder of the project's
   * personal namespace, not access-token bots, not a group's last Owner, and in projects only Owners
   * may change an Owner or make one.
   */
  private async authorizeUpdate(
    tx: EntityManager,
    caller: Caller,
    source: Source,
    user: User,
    currentLevel: number,
    newLevel: number,
  ): Promise<void> {
    if (source.kind === 'project' && source.namespaceHolderId === user.id) throw forbidden();
    if (source.kind === 'group' && (await this.isLastOwner(tx, source, user.id, currentLevel)))
      throw forbidden();
    if (isBot(user) || !this.canAdminMembers(caller, source)) throw forbidden();
    const touchesOwner = currentLevel === AccessLevel.Owner || newLevel === AccessLevel.Owner;
    if (touchesOwner && !this.canManageOwners(caller, source)) throw forbidden();
  }

  /**
   * A group's Owner is its last one when no other active, human user owns it or a group above it:
   * GitLab never leaves a group without an Owner.
   */
  private async isLastOwner(tx: EntityManager, source: Source, userId: number, level: number) {
    if (level !== AccessLevel.Owner) return false;
    const rows: Array<{ others: number }> = await tx.query(
      `SELECT count(DISTINCT m.user_id)::int AS others FROM members m JOIN users u ON u.id = m.user_id
       WHERE m.source_type = 'Namespace' AND m.source_id = ANY($1::int[]) AND m.access_level = $2
         AND ${activeSql('m')} AND m.user_id <> $3 AND u.state = 'active' AND NOT u.bot
         AND u.user_type <> 'project_bot'`,
      [[...source.ancestorIds, source.id], AccessLevel.Owner, userId],
    );
    return Number(rows[0]?.others ?? 0) === 0;
  }

  /** The users' direct membership rows, expired ones included, locked for the change. */
  private async existingRows(tx: EntityManager, source: Source, userIds: number[]) {
    const rows: Array<{ id: number; user_id: number; access_level: number; active: boolean }> =
      await tx.query(
        `SELECT m.id, m.user_id, m.access_level, ${activeSql('m')} AS active FROM members m
       WHERE m.source_type = $1 AND m.source_id = $2 AND m.user_id = ANY($3::int[]) FOR UPDATE`,
        [source.type, source.id, userIds],
      );
    return new Map(
      rows.map((r) => [
        Number(r.user_id),
        { id: Number(r.id), accessLevel: Number(r.access_level), active: Boolean(r.active) },
      ]),
    );
  }

  /**
   * GitLab's record validation of a membership, per user: the level must be a valid one and not below
   * the user's membership of a group above the source, the expiry not in the past, and a bot may only
   * belong to its own project or group (`isNew`: the membership is being created).
   */
  private async validate(
    tx: EntityManager,
    source: Source,
    users: User[],
    level: number,
    expiresAt: string | null,
    isNew: boolean,
  ): Promise<Map<number, Record<string, string[]>>> {
    const result = new Map<number, Record<string, string[]>>();
    if (users.length === 0) return result;
    const ids = users.map((u) => u.id);
    // Per user, the highest membership above the source; on a tie the nearest group names it.
    const inherited: Array<{ user_id: number; access_level: number; name: string }> = source.ancestorIds
      .length
      ? await tx.query(
          `SELECT DISTINCT ON (m.user_id) m.user_id, m.access_level, g.name FROM members m
           JOIN namespaces g ON g.id = m.source_id
           WHERE m.source_type = 'Namespace' AND m.source_id = ANY($1::int[]) AND m.user_id = ANY($2::int[])
             AND ${activeSql('m')}
           ORDER BY m.user_id, m.access_level DESC, cardinality(g.traversal_ids) DESC`,
          [source.ancestorIds, ids],
        )
      : [];
    const highest = new Map(inherited.map((r) => [Number(r.user_id), r]));
    const bots = users.filter(isBot).map((u) => u.id);
    const botsWithMemberships = new Set<number>();
    if (isNew && bots.length) {
      const rows: Array<{ user_id: number }> = await tx.query(
        `SELECT DISTINCT user_id FROM members WHERE user_id = ANY($1::int[])`,
        [bots],
      );
      for (const row of rows) botsWithMemberships.add(Number(row.user_id));
    }
    for (const user of users) {
      const errors: Record<string, string[]> = {};
      const add = (attribute: string, message: string) => (errors[attribute] ??= []).push(message);
      if (expiresAt !== null && expiresAt < today()) add('expires_at', 'cannot be a date in the past');
      const above = highest.get(user.id);
      if (above && !meetsAccessLevel(level, Number(above.access_level))) {
        const name = LEVEL_NAMES[Number(above.access_level)] ?? String(above.access_level);
        add(
          'access_level',
          `should be greater than or equal to ${name} inherited membership from group ${above.name}`,
        );
      }
      if (botsWithMemberships.has(user.id))
        add('user_id', 'project bots cannot be added to other groups / projects');
      if (!VALID_LEVELS.includes(level)) add('access_level', 'is not included in the list');
      if (Object.keys(errors).length) result.set(user.id, errors);
    }
    return result;
  }

  // ---- Sharing projects with groups ------------------------------------------------------------------

  async share(caller: Caller, view: ProjectView, params: ProjectShareParams): Promise<ProjectGroupLink> {
    const source = this.source({ kind: 'project', view });
    return this.dataSource.transaction(async (tx) => {
      // A lock on any group above the project applies to it; the hierarchy rule is the root group's.
      const [settings] = source.ancestorIds.length
        ? ((await tx.query(
            `SELECT bool_or(COALESCE((settings->>'share_with_group_lock')::boolean, FALSE)) AS locked,
               bool_or(id = $2 AND COALESCE((settings->>'prevent_sharing_groups_outside_hierarchy')::boolean,
                 FALSE)) AS in_hierarchy_only
             FROM namespaces WHERE id = ANY($1::int[])`,
            [source.ancestorIds, source.ancestorIds[0]],
          )) as Array<{ locked: boolean; in_hierarchy_only: boolean }>)
        : [];
      if (settings?.locked)
        throw new ApiError(400, { message: 'The project sharing with group is disabled' });
      if (params.group_access === AccessLevel.Owner && !this.canManageOwners(caller, source))
        throw forbidden();
      const group = await tx.getRepository(Namespace).findOneBy({ id: params.group_id, kind: 'group' });
      // GitLab lets the caller share only with groups they belong to, and within the root group's
      // hierarchy when that group prevents sharing outside it.
      if (!group || (!isAdmin(caller) && (await groupAccessLevel(tx, caller, group)) === 0))
        throw notFound('Group');
      if (settings?.in_hierarchy_only && group.traversalIds[0] !== source.ancestorIds[0])
        throw notFound('Group');
      if (source.ancestorIds.includes(group.id))
        throw conflict('Project cannot be shared with the group it is in or one of its ancestors.');
      const links = tx.getRepository(ProjectGroupLink);
      if (await links.existsBy({ projectId: source.id, groupId: group.id }))
        throw conflict('Project already shared with this group');
      try {
        const { identifiers } = await links.insert({
          projectId: source.id,
          groupId: group.id,
          groupAccess: params.group_access,
          expiresAt: params.expires_at ?? null,
        });
        return links.findOneByOrFail({ id: identifiers[0].id as number });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict('Project already shared with this group');
        throw err;
      }
    });
  }

  async unshare(caller: Caller, view: ProjectView, groupId: number): Promise<void> {
    const source = this.source({ kind: 'project', view });
    const links = this.dataSource.getRepository(ProjectGroupLink);
    const link = await links.findOneBy({ projectId: source.id, groupId });
    if (!link) throw notFound('Group Link');
    if (link.groupAccess === AccessLevel.Owner && !this.canManageOwners(caller, source)) throw forbidden();
    await links.delete(link.id);
  }
}
