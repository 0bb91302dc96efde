import { defineFamily, defineService } from '../core/family.js';
import { ProtectedTag, ProtectedTagCreateAccessLevel } from './protected-tag.entity.js';
import { protectedTagsHandlers } from './protected-tags.handlers.js';
import { ProtectedTagsService } from './protected-tags.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    protectedTags: ProtectedTagsService;
  }
}

export const protectedTagsManifest = defineFamily({
  name: 'protected_tags',
  entities: [ProtectedTag, ProtectedTagCreateAccessLevel],
  services: [defineService('protectedTags', [], (core) => new ProtectedTagsService(core))],
  handlers: protectedTagsHandlers,
});
