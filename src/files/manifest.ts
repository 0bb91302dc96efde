import { defineFamily, defineService } from '../core/family.js';
import { filesHandlers } from './files.handlers.js';
import { FilesService } from './files.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    files: FilesService;
  }
}

export const filesManifest = defineFamily({
  name: 'files',
  services: [defineService('files', ['commits', 'repositories'], (_core, deps) => new FilesService(deps))],
  handlers: filesHandlers,
});
