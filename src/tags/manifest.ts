import { defineFamily, defineService } from '../core/family.js';
import { tagsHandlers } from './tags.handlers.js';
import { TagsService } from './tags.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    tags: TagsService;
  }
}

export const tagsManifest = defineFamily({
  name: 'tags',
  services: [
    defineService('tags', ['repositories'], (core, { repositories }) => new TagsService(core, repositories)),
  ],
  handlers: tagsHandlers,
});
