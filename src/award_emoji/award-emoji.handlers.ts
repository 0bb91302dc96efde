import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentAwardEmoji } from './award-emoji.presenter.js';

export const awardEmojiHandlers = defineHandlers(['awardEmoji'], {
  async listMergeRequestAwardEmoji({ params, subject, caller, services, request }) {
    const ref = { iid: params.merge_request_iid };
    const records = await services.awardEmoji.list(caller, subject, ref, params, request);
    return pagedResponse(records, (award) => presentAwardEmoji(award, records, request.externalUrl));
  },

  async createMergeRequestAwardEmoji({ params, subject, body, caller, services, request }) {
    const ref = { iid: params.merge_request_iid };
    const records = await services.awardEmoji.create(caller, subject, ref, body.name);
    return { status: 201, body: presentAwardEmoji(records.items[0], records, request.externalUrl) };
  },

  async getMergeRequestAwardEmoji({ params, subject, caller, services, request }) {
    const ref = { iid: params.merge_request_iid };
    const records = await services.awardEmoji.get(caller, subject, ref, params.award_id);
    return { status: 200, body: presentAwardEmoji(records.items[0], records, request.externalUrl) };
  },

  async deleteMergeRequestAwardEmoji({ params, subject, caller, services }) {
    await services.awardEmoji.remove(caller, subject, { iid: params.merge_request_iid }, params.award_id);
    return { status: 204, body: null };
  },

  async listMergeRequestNoteAwardEmoji({ params, subject, caller, services, request }) {
    const ref = { iid: params.merge_request_iid, noteId: params.note_id };
    const records = await services.awardEmoji.list(caller, subject, ref, params, request);
    return pagedResponse(records, (award) => presentAwardEmoji(award, records, request.externalUrl));
  },

  async createMergeRequestNoteAwardEmoji({ params, subject, body, caller, services, request }) {
    const ref = { iid: params.merge_request_iid, noteId: params.note_id };
    const records = await services.awardEmoji.create(caller, subject, ref, body.name);
    return { status: 201, body: presentAwardEmoji(records.items[0], records, request.externalUrl) };
  },

  async getMergeRequestNoteAwardEmoji({ params, subject, caller, services, request }) {
    const ref = { iid: params.merge_request_iid, noteId: params.note_id };
    const records = await services.awardEmoji.get(caller, subject, ref, params.award_id);
    return { status: 200, body: presentAwardEmoji(records.items[0], records, request.externalUrl) };
  },

  async deleteMergeRequestNoteAwardEmoji({ params, subject, caller, services }) {
    const ref = { iid: params.merge_request_iid, noteId: params.note_id };
    await services.awardEmoji.remove(caller, subject, ref, params.award_id);
    return { status: 204, body: null };
  },
});
