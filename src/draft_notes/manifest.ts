import { defineFamily, defineService } from '../core/family.js';
import { DraftNotes1767745100000 } from './migrations/1767745100000-draft-notes.js';
import { DraftNote } from './draft-note.entity.js';
import { draftNotesHandlers } from './draft-notes.handlers.js';
import { DraftNotesService } from './draft-notes.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    draftNotes: DraftNotesService;
  }
}

export const draftNotesManifest = defineFamily({
  name: 'draft_notes',
  entities: [DraftNote],
  migrations: [DraftNotes1767745100000],
  services: [
    defineService(
      'draftNotes',
      ['mergeRequests', 'notes'],
      (core, deps) => new DraftNotesService(core, deps),
    ),
  ],
  handlers: draftNotesHandlers,
});
