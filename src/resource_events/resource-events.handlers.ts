import type { ServiceRegistry } from '../core/family.js';
import { defineHandlers } from '../core/handler.js';
import { pagedResponse, type PageParams, type RequestInfo } from '../core/pagination.js';
import type { ProjectView } from '../projects/projects.service.js';
import { presentLabelEvent, presentMilestoneEvent, presentStateEvent } from './resource-event.presenter.js';
import type { EventKind, EventRecords } from './resource-events.service.js';

interface EventsContext<P> {
  params: P & { merge_request_iid: number };
  subject: ProjectView;
  services: Pick<ServiceRegistry, 'resourceEvents'>;
  request: RequestInfo;
}

/** The list and get operations of one kind of event: they differ only in the kind and its presenter. */
function eventsOf<K extends EventKind, J>(
  kind: K,
  present: (event: EventRecords<K>['items'][number], records: EventRecords<K>, externalUrl: string) => J,
) {
  const eventId = `resource_${kind}_event_id` as const;
  return {
    async list({ params, subject, services, request }: EventsContext<PageParams>) {
      const iid = params.merge_request_iid;
      const records = await services.resourceEvents.list(kind, subject, iid, params, request);
      return pagedResponse(records, (event) => present(event, records, request.externalUrl));
    },

    async get({ params, subject, services, request }: EventsContext<Record<typeof eventId, number>>) {
      const iid = params.merge_request_iid;
      const records = await services.resourceEvents.get(kind, subject, iid, params[eventId]);
      return { status: 200 as const, body: present(records.items[0], records, request.externalUrl) };
    },
  };
}

const labelEvents = eventsOf('label', presentLabelEvent);
const milestoneEvents = eventsOf('milestone', presentMilestoneEvent);
const stateEvents = eventsOf('state', presentStateEvent);

export const resourceEventsHandlers = defineHandlers(['resourceEvents'], {
  listMergeRequestResourceLabelEvents: labelEvents.list,
  getMergeRequestResourceLabelEvent: labelEvents.get,
  listMergeRequestResourceMilestoneEvents: milestoneEvents.list,
  getMergeRequestResourceMilestoneEvent: milestoneEvents.get,
  listMergeRequestResourceStateEvents: stateEvents.list,
  getMergeRequestResourceStateEvent: stateEvents.get,
});
