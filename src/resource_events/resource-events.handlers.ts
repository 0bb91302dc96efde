import { defineHandlers } from '../core/handler.js';
import { presentLabelEvent, presentMilestoneEvent, presentStateEvent } from './resource-event.presenter.js';

export const resourceEventsHandlers = defineHandlers({
  async listMergeRequestResourceLabelEvents({ params, subject, services, request }) {
    const records = await services.resourceEvents.list(
      'label',
      subject,
      params.merge_request_iid,
      params,
      request,
    );
    return {
      status: 200,
      body: records.items.map((event) => presentLabelEvent(event, records, request.externalUrl)),
      headers: records.headers,
    };
  },

  async getMergeRequestResourceLabelEvent({ params, subject, services, request }) {
    const records = await services.resourceEvents.get(
      'label',
      subject,
      params.merge_request_iid,
      params.resource_label_event_id,
    );
    return { status: 200, body: presentLabelEvent(records.items[0], records, request.externalUrl) };
  },

  async listMergeRequestResourceMilestoneEvents({ params, subject, services, request }) {
    const records = await services.resourceEvents.list(
      'milestone',
      subject,
      params.merge_request_iid,
      params,
      request,
    );
    return {
      status: 200,
      body: records.items.map((event) => presentMilestoneEvent(event, records, request.externalUrl)),
      headers: records.headers,
    };
  },

  async getMergeRequestResourceMilestoneEvent({ params, subject, services, request }) {
    const records = await services.resourceEvents.get(
      'milestone',
      subject,
      params.merge_request_iid,
      params.resource_milestone_event_id,
    );
    return { status: 200, body: presentMilestoneEvent(records.items[0], records, request.externalUrl) };
  },

  async listMergeRequestResourceStateEvents({ params, subject, services, request }) {
    const records = await services.resourceEvents.list(
      'state',
      subject,
      params.merge_request_iid,
      params,
      request,
    );
    return {
      status: 200,
      body: records.items.map((event) => presentStateEvent(event, records, request.externalUrl)),
      headers: records.headers,
    };
  },

  async getMergeRequestResourceStateEvent({ params, subject, services, request }) {
    const records = await services.resourceEvents.get(
      'state',
      subject,
      params.merge_request_iid,
      params.resource_state_event_id,
    );
    return { status: 200, body: presentStateEvent(records.items[0], records, request.externalUrl) };
  },
});
