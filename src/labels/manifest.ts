import { labelsAbilities } from './abilities.js';
import { defineFamily, defineService } from '../core/family.js';
import { LabelSubscriptions1767744200000 } from './migrations/1767744200000-label-subscriptions.js';
import { Label, LabelPriority, LabelSubscription } from './label.entity.js';
import { labelsHandlers } from './labels.handlers.js';
import { Labels1767528000000 } from './migrations/1767528000000-labels.js';
import { LabelsService } from './labels.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    labels: LabelsService;
  }
}

export const labelsManifest = defineFamily({
  name: 'labels',
  abilities: labelsAbilities,
  entities: [Label, LabelPriority, LabelSubscription],
  migrations: [Labels1767528000000, LabelSubscriptions1767744200000],
  services: [defineService('labels', [], (core) => new LabelsService(core))],
  handlers: labelsHandlers,
});
