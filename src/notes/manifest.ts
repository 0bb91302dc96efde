import { notesAbilities } from './abilities.js';
import { defineSubscriber } from '../core/events.js';
import { defineFamily, defineService } from '../core/family.js';
import { Notes1767657600000 } from './migrations/1767657600000-notes.js';
import { Note } from './note.entity.js';
import { notesHandlers } from './notes.handlers.js';
import { NotesService } from './notes.service.js';

declare module '../core/family.js' {
  interface ServiceRegistry {
    notes: NotesService;
  }
}

export const notesManifest = defineFamily({
  name: 'notes',
  abilities: notesAbilities,
  entities: [Note],
  migrations: [Notes1767657600000],
  services: [defineService('notes', ['mergeRequests'], (core, deps) => new NotesService(core, deps))],
  subscribers: ({ notes }) => [
    // A merge request's changes are recorded as system notes, as GitLab's SystemNoteService does.
    defineSubscriber({
      event: 'merge_request.changed',
      name: 'notes.merge_request_system_notes',
      handle: (payload) => notes.writeSystemNotes(payload),
    }),
  ],
  handlers: notesHandlers,
});
