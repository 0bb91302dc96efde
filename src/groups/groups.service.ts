import type { DataSource, EntityManager } from 'typeorm';
import { canSee, groupSubject, isAdmin, type Subject } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { notFound } from '../core/errors.js';
import { Namespace } from '../namespaces/namespace.entity.js';
import type { ServiceDeps } from '../services.js';

/** A group as one caller sees it. */
export interface GroupView {
  group: Namespace;
  subject: Subject;
}

export class GroupsService {
  private readonly dataSource: DataSource;

  constructor(deps: ServiceDeps) {
    this.dataSource = deps.dataSource;
  }

  /** One group by integer id or full path; 404 `Group Not Found` unless the caller may see it. */
  async find(
    caller: Caller,
    id: string | number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<GroupView> {
    const key = String(id);
    const query = manager.getRepository(Namespace).createQueryBuilder('g').where(`g.kind = 'group'`);
    if (/^\d+$/.test(key)) query.andWhere('g.id = :id', { id: Number(key) });
    else query.andWhere('lower(g.full_path) = lower(:path)', { path: key });
    const group = await query.getOne();
    if (!group || (group.markedForDeletionAt && !isAdmin(caller))) throw notFound('Group');
    const subject = await groupSubject(manager, caller, group);
    if (!canSee(caller, subject)) throw notFound('Group');
    return { group, subject };
  }
}
