import { defineFamily, defineService } from '../core/family.js';
import { sidekiqHandlers } from './sidekiq.handlers.js';
import { SidekiqService } from './sidekiq.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    sidekiq: SidekiqService;
  }
}

export const sidekiqManifest = defineFamily({
  name: 'sidekiq',
  services: [defineService('sidekiq', [], (core) => new SidekiqService(core.events))],
  handlers: sidekiqHandlers,
});
