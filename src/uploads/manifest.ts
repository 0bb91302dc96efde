import { uploadsAbilities } from './abilities.js';
import path from 'node:path';
import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { Uploads1767571300000 } from './migrations/1767571300000-uploads.js';
import '../projects/projects.events.js';
import { Upload } from './upload.entity.js';
import { UploadStorage } from './upload-storage.js';
import { uploadsHandlers } from './uploads.handlers.js';
import { UploadsService } from './uploads.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    uploads: UploadsService;
  }
}

export const uploadsManifest = defineFamily({
  name: 'uploads',
  abilities: uploadsAbilities,
  entities: [Upload],
  migrations: [Uploads1767571300000],
  services: [
    defineService(
      'uploads',
      ['projects'],
      (core, { projects }) =>
        new UploadsService(core, new UploadStorage(path.join(core.config.dataDir, 'uploads')), projects),
    ),
  ],
  // A deleted project's rows went with it; its files go here, as GitLab removes them after the project.
  subscribers: ({ uploads }) => [
    defineSubscriber({
      event: 'project.deleted',
      name: 'uploads_remove',
      retryDelaySeconds: 5,
      handle: ({ projectId }) => uploads.removeProject(projectId),
    }),
  ],
  handlers: uploadsHandlers,
});
