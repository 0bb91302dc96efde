import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentDiscussion, presentNote } from './note.presenter.js';

export const notesHandlers = defineHandlers(['notes'], {
  async listMergeRequestNotes({ params, subject, caller, services, request }) {
    const records = await services.notes.list(caller, subject, params.merge_request_iid, params, request);
    return pagedResponse(records, (note) => presentNote(note, records, request.externalUrl));
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

  async listMergeRequestDiscussions({ params, subject, caller, services, request }) {
    const records = await services.notes.listDiscussions(
      caller,
      subject,
      params.merge_request_iid,
      params,
      request,
    );
    return {
      status: 200,
      body: records.discussions.map((d) => presentDiscussion(d, records, request.externalUrl)),
      headers: records.headers,
    };
  },

  async createMergeRequestDiscussion({ params, subject, body, caller, services, request }) {
    const records = await services.notes.createDiscussion(caller, subject, params.merge_request_iid, body);
    return { status: 201, body: presentDiscussion(records.discussions[0], records, request.externalUrl) };
  },

  async getMergeRequestDiscussion({ params, subject, caller, services, request }) {
    const records = await services.notes.getDiscussion(
      caller,
      subject,
      params.merge_request_iid,
      params.discussion_id,
    );
    return { status: 200, body: presentDiscussion(records.discussions[0], records, request.externalUrl) };
  },

  async resolveMergeRequestDiscussion({ params, subject, body, caller, services, request }) {
    const records = await services.notes.resolveDiscussion(
      caller,
      subject,
      params.merge_request_iid,
      params.discussion_id,
      body.resolved,
    );
    return { status: 200, body: presentDiscussion(records.discussions[0], records, request.externalUrl) };
  },

  async createMergeRequestDiscussionNote({ params, subject, body, caller, services, request }) {
    const records = await services.notes.reply(
      caller,
      subject,
      params.merge_request_iid,
      params.discussion_id,
      body,
    );
    return { status: 201, body: presentNote(records.items[0], records, request.externalUrl) };
  },

  async updateMergeRequestDiscussionNote({ params, subject, body, caller, services, request }) {
    const records = await services.notes.updateDiscussionNote(
      caller,
      subject,
      params.merge_request_iid,
      params.discussion_id,
      params.note_id,
      body,
    );
    return { status: 200, body: presentNote(records.items[0], records, request.externalUrl) };
  },

  async deleteMergeRequestDiscussionNote({ params, subject, caller, services }) {
    await services.notes.removeDiscussionNote(
      caller,
      subject,
      params.merge_request_iid,
      params.discussion_id,
      params.note_id,
    );
    return { status: 204, body: null };
  },
});
