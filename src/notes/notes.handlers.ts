import { defineHandlers } from '../core/handler.js';
import { presentNote } from './note.presenter.js';

export const notesHandlers = defineHandlers({
  async listMergeRequestNotes({ params, subject, caller, services, request }) {
    const records = await services.notes.list(caller, subject, params.merge_request_iid, params, request);
    return {
      status: 200,
      body: records.items.map((note) => presentNote(note, records, request.externalUrl)),
      headers: records.headers,
    };
  },

  async createMergeRequestNote({ params, subject, body, caller, services, request }) {
    const records = await services.notes.create(caller, subject, params.merge_request_iid, body);
    return { status: 201, body: presentNote(records.items[0], records, request.externalUrl) };
  },

  async getMergeRequestNote({ params, subject, caller, services, request }) {
    const records = await services.notes.get(caller, subject, params.merge_request_iid, params.note_id);
    return { status: 200, body: presentNote(records.items[0], records, request.externalUrl) };
  },

  async updateMergeRequestNote({ params, subject, body, caller, services, request }) {
    const records = await services.notes.update(
      caller,
      subject,
      params.merge_request_iid,
      params.note_id,
      body.body,
    );
    return { status: 200, body: presentNote(records.items[0], records, request.externalUrl) };
  },

  async deleteMergeRequestNote({ params, subject, caller, services }) {
    await services.notes.remove(caller, subject, params.merge_request_iid, params.note_id);
    return { status: 204, body: null };
  },
});
