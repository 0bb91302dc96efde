import type { components } from '../../generated/openapi.js';
import { presentLabelBasic } from '../labels/label.presenter.js';
import { presentMilestone } from '../milestones/milestone.presenter.js';
import { ghost } from '../notes/note.presenter.js';
import { presentUserSummary } from '../users/user.presenter.js';
import type {
  ResourceLabelEvent,
  ResourceMilestoneEvent,
  ResourceStateEvent,
} from './resource-event.entity.js';
import type { EventRecords } from './resource-events.service.js';

export type ResourceLabelEventJson = components['schemas']['ResourceLabelEvent'];
export type ResourceMilestoneEventJson = components['schemas']['ResourceMilestoneEvent'];
export type ResourceStateEventJson = components['schemas']['ResourceStateEvent'];

type Common = Pick<ResourceStateEvent, 'id' | 'userId' | 'mergeRequestId' | 'createdAt'>;

/** The fields every resource event has; a deleted user's events are the ghost user's. */
function common(event: Common, records: Pick<EventRecords<'state'>, 'users'>, externalUrl: string) {
  const user = event.userId === null ? undefined : records.users.get(event.userId);
  return {
    id: event.id,
    user: user ? presentUserSummary(user, externalUrl) : ghost(externalUrl),
    created_at: event.createdAt.toISOString(),
    resource_type: 'MergeRequest' as const,
    resource_id: event.mergeRequestId,
  };
}

export function presentLabelEvent(
  event: ResourceLabelEvent,
  records: EventRecords<'label'>,
  externalUrl: string,
): ResourceLabelEventJson {
  const label = event.labelId === null ? undefined : records.labels.get(event.labelId);
  return {
    ...common(event, records, externalUrl),
    label: label ? presentLabelBasic(label) : null,
    action: event.action,
  };
}

export function presentMilestoneEvent(
  event: ResourceMilestoneEvent,
  records: EventRecords<'milestone'>,
  externalUrl: string,
): ResourceMilestoneEventJson {
  const milestone = event.milestoneId === null ? undefined : records.milestones.get(event.milestoneId);
  return {
    ...common(event, records, externalUrl),
    milestone: milestone ? presentMilestone(milestone, externalUrl) : null,
    action: event.action,
  };
}

export function presentStateEvent(
  event: ResourceStateEvent,
  records: EventRecords<'state'>,
  externalUrl: string,
): ResourceStateEventJson {
  return { ...common(event, records, externalUrl), state: event.state };
}
