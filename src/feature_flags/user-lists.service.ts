import type { DataSource, EntityManager } from 'typeorm';
import { ApiError, recordNotFound } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import { paginateOffset, type Page, type PageParams, type RequestInfo } from '../core/pagination.js';
import { containing } from '../core/search.js';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.js';
import { nextInternalId } from '../db/internal-ids.js';
import type { ProjectView } from '../projects/projects.service.js';
import { FeatureFlagStrategy, FeatureFlagUserList } from './feature-flag.entity.js';
import { normaliseUserXids, userXidsMessage, validUserXids } from './strategy-rules.js';

/** GitLab answers a list's validation errors with 400 and its full messages. */
const invalid = (...messages: string[]) => new ApiError(400, { message: messages });
const NAME_TAKEN = 'Name has already been taken';
const IN_USE = 'User list is associated with a strategy';

export interface UserListInput {
  name?: string;
  user_xids?: string;
}

export class FeatureFlagUserListsService {
  private readonly dataSource: DataSource;

  constructor(core: CoreDeps) {
    this.dataSource = core.dataSource;
  }

  /** Every word of `search` must be in the name. */
  list(
    view: ProjectView,
    params: PageParams & { search?: string },
    request: RequestInfo,
  ): Promise<Page<FeatureFlagUserList>> {
    const query = this.dataSource
      .getRepository(FeatureFlagUserList)
      .createQueryBuilder('l')
      .where('l.project_id = :projectId', { projectId: view.project.id })
      .orderBy('l.iid', 'ASC');
    (params.search ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .forEach((word, i) => query.andWhere(`l.name ILIKE :word${i}`, { [`word${i}`]: containing(word) }));
    return paginateOffset(query, params, request);
  }

  async get(view: ProjectView, iid: number, manager: EntityManager = this.dataSource.manager) {
    const list = await manager
      .getRepository(FeatureFlagUserList)
      .findOneBy({ projectId: view.project.id, iid });
    if (!list) throw recordNotFound();
    return list;
  }

  async create(view: ProjectView, input: Required<UserListInput>): Promise<FeatureFlagUserList> {
    const userXids = this.userXids(input.user_xids);
    return this.dataSource
      .transaction(async (tx) => {
        const now = new Date();
        const repository = tx.getRepository(FeatureFlagUserList);
        const inserted = await repository.insert({
          projectId: view.project.id,
          iid: await nextInternalId(tx, view.project.id, 'feature_flag_user_lists'),
          name: input.name,
          userXids,
          createdAt: now,
          updatedAt: now,
        });
        return repository.findOneByOrFail({ id: inserted.identifiers[0].id as number });
      })
      .catch(renameTaken);
  }

  async update(view: ProjectView, iid: number, input: UserListInput): Promise<FeatureFlagUserList> {
    const list = await this.get(view, iid);
    const changes: Partial<FeatureFlagUserList> = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.user_xids !== undefined) changes.userXids = this.userXids(input.user_xids);
    if (Object.keys(changes).length === 0) return list;
    changes.updatedAt = new Date();
    await this.dataSource.getRepository(FeatureFlagUserList).update(list.id, changes).catch(renameTaken);
    return { ...list, ...changes };
  }

  /** A list a strategy uses stays: 409, as GitLab answers (the foreign key backs it against a race). */
  async remove(view: ProjectView, iid: number): Promise<void> {
    const list = await this.get(view, iid);
    const inUse = () => new ApiError(409, { message: [IN_USE] });
    await this.dataSource
      .transaction(async (tx) => {
        if (await tx.getRepository(FeatureFlagStrategy).existsBy({ userListId: list.id })) throw inUse();
        await tx.getRepository(FeatureFlagUserList).delete(list.id);
      })
      .catch((err: unknown) => {
        if (isForeignKeyViolation(err)) throw inUse();
        throw err;
      });
  }

  private userXids(value: string): string {
    const normalised = normaliseUserXids(value);
    if (!validUserXids(normalised)) throw invalid(`User xids ${userXidsMessage('user_xids')}`);
    return normalised;
  }
}

function renameTaken(err: unknown): never {
  if (isUniqueViolation(err)) throw invalid(NAME_TAKEN);
  throw err;
}
