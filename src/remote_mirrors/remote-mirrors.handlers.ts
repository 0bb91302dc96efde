import { defineHandlers } from '../core/handler.js';
import { pagedResponse } from '../core/pagination.js';
import { presentRemoteMirror } from './remote-mirror.presenter.js';

export const remoteMirrorsHandlers = defineHandlers(['remoteMirrors'], {
  async listRemoteMirrors({ params, subject, services, request }) {
    const page = await services.remoteMirrors.list(subject, params, request);
    const shown = services.remoteMirrors.branchRegexShown;
    return pagedResponse(page, (m) => presentRemoteMirror(m, shown));
  },

  async createRemoteMirror({ subject, body, services }) {
    const mirror = await services.remoteMirrors.create(subject, body!);
    return { status: 201, body: presentRemoteMirror(mirror, services.remoteMirrors.branchRegexShown) };
  },

  async getRemoteMirror({ params, subject, services }) {
    const mirror = await services.remoteMirrors.get(subject, params.mirror_id);
    return { status: 200, body: presentRemoteMirror(mirror, services.remoteMirrors.branchRegexShown) };
  },

  async updateRemoteMirror({ params, subject, body, services }) {
    const mirror = await services.remoteMirrors.update(subject, params.mirror_id, body ?? {});
    return { status: 200, body: presentRemoteMirror(mirror, services.remoteMirrors.branchRegexShown) };
  },

  async deleteRemoteMirror({ params, subject, services }) {
    await services.remoteMirrors.remove(subject, params.mirror_id);
    return { status: 204, body: null };
  },

  async getRemoteMirrorPublicKey({ params, subject, services }) {
    const publicKey = await services.remoteMirrors.publicKey(subject, params.mirror_id);
    return { status: 200, body: { public_key: publicKey } };
  },

  async syncRemoteMirror({ params, subject, services }) {
    await services.remoteMirrors.requestSync(subject, params.mirror_id);
    return { status: 204, body: null };
  },
});
