import { defineFamily, defineService } from '../core/family.js';
import { ResourceEvents1767744500000 } from './migrations/1767744500000-resource-events.js';
import { ResourceLabelEvent, ResourceMilestoneEvent, ResourceStateEvent } from './resource-event.entity.js';
import { resourceEventsHandlers } from './resource-events.handlers.js';
import { ResourceEventsService } from './resource-events.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    resourceEvents: ResourceEventsService;
  }
}

export const resourceEventsManifest = defineFamily({
  name: 'resource_events',
  entities: [ResourceLabelEvent, ResourceMilestoneEvent, ResourceStateEvent],
  migrations: [ResourceEvents1767744500000],
  services: [
    defineService(
      'resourceEvents',
      ['mergeRequests', 'milestones'],
      (core, deps) => new ResourceEventsService(core, deps),
    ),
  ],
  handlers: resourceEventsHandlers,
});
