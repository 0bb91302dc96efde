import { defineHandlers } from '../core/handler.js';
import { presentDraftNote } from './draft-note.presenter.js';

export const draftNotesHandlers = defineHandlers(['draftNotes'], {
  async listMergeRequestDraftNotes({ params, subject, caller, services }) {
    const records = await services.draftNotes.list(caller, subject, params.merge_request_iid);
    return { status: 200, body: records.items.map(presentDraftNote) };
  },

  async createMergeRequestDraftNote({ params, subject, body, caller, services }) {
    const records = await services.draftNotes.create(caller, subject, params.merge_request_iid, body);
    return { status: 201, body: presentDraftNote(records.items[0]) };
  },

  async getMergeRequestDraftNote({ params, subject, caller, services }) {
    const { merge_request_iid: iid, draft_note_id: draftId } = params;
    const records = await services.draftNotes.get(caller, subject, iid, draftId);
    return { status: 200, body: presentDraftNote(records.items[0]) };
  },

  async updateMergeRequestDraftNote({ params, subject, body, caller, services }) {
    const { merge_request_iid: iid, draft_note_id: draftId } = params;
    const records = await services.draftNotes.update(caller, subject, iid, draftId, body);
    return { status: 200, body: presentDraftNote(records.items[0]) };
  },

  async deleteMergeRequestDraftNote({ params, subject, caller, services }) {
    await services.draftNotes.remove(caller, subject, params.merge_request_iid, params.draft_note_id);
    return { status: 204, body: null };
  },

  async publishMergeRequestDraftNote({ params, subject, caller, services }) {
    await services.draftNotes.publish(caller, subject, params.merge_request_iid, params.draft_note_id);
    return { status: 204, body: null };
  },

  async bulkPublishMergeRequestDraftNotes({ params, subject, caller, services }) {
    await services.draftNotes.publishAll(caller, subject, params.merge_request_iid);
    return { status: 204, body: null };
  },
});
