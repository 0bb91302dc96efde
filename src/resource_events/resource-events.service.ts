import { In, type DataSource, type EntityManager } from 'typeorm';
import { recordNotFound } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { offsetHeaders, perPageOf, type RequestInfo } from '../core/pagination.js';
import { Label } from '../labels/label.entity.js';
import { Milestone } from '../milestones/milestone.entity.js';
import type { MilestoneRecord } from '../milestones/milestones.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import { User } from '../users/user.entity.js';
import { ResourceLabelEvent, ResourceMilestoneEvent, ResourceStateEvent } from './resource-event.entity.js';

type PageParams = { page?: number; per_page?: number };

const ENTITIES = {
  label: ResourceLabelEvent,
  milestone: ResourceMilestoneEvent,
  state: ResourceStateEvent,
} as const;

export type EventKind = keyof typeof ENTITIES;
type EventOf<K extends EventKind> = InstanceType<(typeof ENTITIES)[K]>;

/** Events with what they name (users, labels, milestones), loaded a page at a time. */
export interface EventRecords<K extends EventKind> {
  items: Array<EventOf<K>>;
  users: Map<number, User>;
  labels: Map<number, Label>;
  milestones: Map<number, MilestoneRecord>;
}

/**
 * Reads a merge request's resource events. They are written by the merge requests' own transactions,
 * through `record.ts`; nothing here writes.
 */
export class ResourceEventsService {
  private readonly dataSource: DataSource;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'mergeRequests' | 'milestones'>,
  ) {
    this.dataSource = deps.dataSource;
  }

  async list<K extends EventKind>(
    kind: K,
    view: ProjectView,
    iid: number,
    params: PageParams,
    request: RequestInfo,
  ): Promise<EventRecords<K> & { headers: Record<string, string> }> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const [items, total] = await this.dataSource
      .getRepository<EventOf<K>>(ENTITIES[kind])
      .createQueryBuilder('e')
      .where('e.merge_request_id = :mergeRequestId', { mergeRequestId: mergeRequest.id })
      .orderBy('e.id', 'ASC')
      .skip((page - 1) * perPage)
      .take(perPage)
      .getManyAndCount();
    return { ...(await this.records(items)), headers: offsetHeaders(total, page, perPage, request) };
  }

  async get<K extends EventKind>(
    kind: K,
    view: ProjectView,
    iid: number,
    eventId: number,
  ): Promise<EventRecords<K>> {
    const mergeRequest = await this.services.mergeRequests.find(view, iid);
    const event = await this.dataSource
      .getRepository<EventOf<K>>(ENTITIES[kind])
      .createQueryBuilder('e')
      .where('e.merge_request_id = :mergeRequestId', { mergeRequestId: mergeRequest.id })
      .andWhere('e.id = :eventId', { eventId })
      .getOne();
    if (!event) throw recordNotFound();
    return this.records([event]);
  }

  private async records<K extends EventKind>(items: Array<EventOf<K>>): Promise<EventRecords<K>> {
    const manager = this.dataSource.manager;
    const idsOf = (pick: (event: EventOf<K>) => number | null | undefined) => [
      ...new Set(items.flatMap((event) => pick(event) ?? [])),
    ];
    const userIds = idsOf((event) => event.userId);
    const labelIds = idsOf((event) => ('labelId' in event ? event.labelId : null));
    const milestoneIds = idsOf((event) => ('milestoneId' in event ? event.milestoneId : null));
    const [users, labels, milestones] = await Promise.all([
      byId(manager, User, userIds),
      byId(manager, Label, labelIds),
      byId(manager, Milestone, milestoneIds),
    ]);
    const milestoneRecords = new Map<number, MilestoneRecord>();
    for (const record of await this.services.milestones.records([...milestones.values()], manager))
      milestoneRecords.set(record.milestone.id, record);
    return { items, users, labels, milestones: milestoneRecords };
  }
}

async function byId<T extends { id: number }>(
  manager: EntityManager,
  entity: new () => T,
  ids: number[],
): Promise<Map<number, T>> {
  const found = new Map<number, T>();
  if (ids.length === 0) return found;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- TypeORM's where type is not generic-friendly
  for (const row of await manager.getRepository(entity).findBy({ id: In(ids) } as any))
    found.set(row.id, row);
  return found;
}
