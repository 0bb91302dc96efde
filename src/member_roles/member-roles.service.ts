import type { DataSource, EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import { MEMBER_ROLE_PERMISSIONS } from '../core/abilities.js';
import { ApiError, badParameter, notFound } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { isUniqueViolation } from '../db/errors.js';
import type { Namespace } from '../namespaces/namespace.entity.js';
import { MemberRole } from './member-role.entity.js';

export type MemberRoleCreateParams = components['schemas']['MemberRoleCreate'];
export type MemberRoleUpdateParams = components['schemas']['MemberRoleUpdate'];

const badRequest = (message: string) => new ApiError(400, { message });

/** Instance roles (`group` null) and the roles of top-level groups. */
export class MemberRolesService {
  private readonly dataSource: DataSource;

  constructor(deps: CoreDeps) {
    this.dataSource = deps.dataSource;
  }

  /** The roles of a group (a subgroup has none), or the instance's; by id. */
  list(group: Namespace | null): Promise<MemberRole[]> {
    const query = this.dataSource.getRepository(MemberRole).createQueryBuilder('r').orderBy('r.id', 'ASC');
    if (group) query.where('r.namespace_id = :id', { id: group.id });
    else query.where('r.namespace_id IS NULL');
    return query.getMany();
  }

  async create(group: Namespace | null, params: MemberRoleCreateParams): Promise<MemberRole> {
    if (group && group.parentId !== null)
      throw badRequest('Creation of member role is allowed only for root groups');
    const params_ = params as Record<string, unknown>;
    const roles = this.dataSource.getRepository(MemberRole);
    try {
      const { identifiers } = await roles.insert({
        name: params.name,
        description: params.description ?? null,
        namespaceId: group?.id ?? null,
        baseAccessLevel: params.base_access_level,
        permissions: MEMBER_ROLE_PERMISSIONS.filter((flag) => params_[flag] === true),
      });
      return await roles.findOneByOrFail({ id: identifiers[0].id as number });
    } catch (err) {
      if (isUniqueViolation(err)) throw badRequest('Name has already been taken');
      throw err;
    }
  }

  /** Renames a role of the group (or an instance role) or changes its description; nothing else moves. */
  async update(
    group: Namespace | null,
    id: number,
    params: MemberRoleUpdateParams = {},
  ): Promise<MemberRole> {
    const { name, description } = params;
    if (name === undefined && description === undefined)
      throw badParameter('name, description are missing, at least one parameter must be provided');
    if (name !== undefined && name.trim() === '') throw badRequest("Name can't be blank");
    try {
      return await this.dataSource.transaction(async (tx) => {
        const role = await this.findOwn(tx, group, id);
        if (name !== undefined) role.name = name;
        if (description !== undefined) role.description = description;
        return tx.getRepository(MemberRole).save(role);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw badRequest('Name has already been taken');
      throw err;
    }
  }

  /** Deletes a role of the group (or an instance role); one still given to a member stays, as in GitLab. */
  async remove(group: Namespace | null, id: number): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const role = await this.findOwn(tx, group, id);
      // The row lock keeps a member from getting the role while it goes (the foreign key waits on it).
      const [used] = (await tx.query('SELECT 1 FROM members WHERE member_role_id = $1 LIMIT 1', [
        role.id,
      ])) as unknown[];
      if (used)
        throw badRequest(
          'Role is assigned to one or more group members. Remove role from all group members, then delete role.',
        );
      await tx.getRepository(MemberRole).delete(role.id);
    });
  }

  private async findOwn(tx: EntityManager, group: Namespace | null, id: number): Promise<MemberRole> {
    const query = tx
      .getRepository(MemberRole)
      .createQueryBuilder('r')
      .where('r.id = :id', { id })
      .setLock('pessimistic_write');
    if (group) query.andWhere('r.namespace_id = :group', { group: group.id });
    else query.andWhere('r.namespace_id IS NULL');
    const role = await query.getOne();
    if (!role) throw notFound('Member Role');
    return role;
  }

  /**
   * The role a membership of a source under top-level group `rootGroupId` (null for a personal
   * project) may carry: an instance role or one of that group. Null when there is no such role.
   */
  async assignable(
    manager: EntityManager,
    id: number,
    rootGroupId: number | null,
  ): Promise<MemberRole | null> {
    const role = await manager.getRepository(MemberRole).findOneBy({ id });
    if (!role) return null;
    return role.namespaceId === null || role.namespaceId === rootGroupId ? role : null;
  }

  /** Roles by id, in one query (for presenting members). */
  async byIds(
    ids: number[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Map<number, MemberRole>> {
    if (ids.length === 0) return new Map();
    const roles = await manager
      .getRepository(MemberRole)
      .createQueryBuilder('r')
      .where('r.id = ANY(:ids)', { ids })
      .getMany();
    return new Map(roles.map((role) => [role.id, role]));
  }
}
