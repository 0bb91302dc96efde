import { defineFamily, defineService } from '../core/family.js';
import { metadataHandlers } from './metadata.handlers.js';
import { MetadataService } from './metadata.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    metadata: MetadataService;
  }
}

export const metadataManifest = defineFamily({
  name: 'metadata',
  services: [defineService('metadata', [], (core) => new MetadataService(core.config.tier))],
  handlers: metadataHandlers,
});
