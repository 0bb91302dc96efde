import { Readable } from 'node:stream';
import { defineHandlers } from '../core/handler.js';
import { contentDisposition } from '../files/file.presenter.js';
import { presentSnippet } from './snippet.presenter.js';
import type { SnippetRecords, SnippetsService } from './snippets.service.js';

const one = (records: SnippetRecords, externalUrl: string) =>
  presentSnippet(records.items[0], records, externalUrl);
const many = (records: SnippetRecords, externalUrl: string) =>
  records.items.map((snippet) => presentSnippet(snippet, records, externalUrl));

/** Raw content as GitLab sends it: plain text, inline, never cached. */
function rawResponse({ fileName, file }: Awaited<ReturnType<SnippetsService['raw']>>) {
  return {
    status: 200 as const,
    stream: file ? file.output.stream : Readable.from([]),
    headers: {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': String(file?.size ?? 0),
      'Content-Disposition': contentDisposition(fileName),
      'Cache-Control': 'max-age=0, private, must-revalidate, no-store, no-cache',
    },
  };
}

export const snippetsHandlers = defineHandlers(['snippets'], {
  async listProjectSnippets({ params, subject, caller, services, request }) {
    const records = await services.snippets.listProject(caller, subject, params, request);
    return { status: 200, body: many(records, request.externalUrl), headers: records.headers };
  },

  async createProjectSnippet({ subject, body, caller, services, request }) {
    const records = await services.snippets.create(caller, subject, body, request);
    return { status: 201, body: one(records, request.externalUrl) };
  },

  async getProjectSnippet({ params, subject, caller, services, request }) {
    const records = await services.snippets.getProject(caller, subject, params.snippet_id);
    return { status: 200, body: one(records, request.externalUrl) };
  },

  async updateProjectSnippet({ params, subject, body, caller, services, request }) {
    const records = await services.snippets.updateProject(caller, subject, params.snippet_id, body);
    return { status: 200, body: one(records, request.externalUrl) };
  },

  async deleteProjectSnippet({ params, subject, caller, services }) {
    await services.snippets.removeProject(caller, subject, params.snippet_id);
    return { status: 204, body: null };
  },

  async getProjectSnippetRaw({ params, subject, caller, services }) {
    return rawResponse(await services.snippets.raw(caller, subject, params.snippet_id));
  },

  async getProjectSnippetFileRaw({ params, subject, caller, services }) {
    const at = { ref: params.ref, filePath: params.file_path };
    return rawResponse(await services.snippets.raw(caller, subject, params.snippet_id, at));
  },

  async getProjectSnippetUserAgentDetail({ params, subject, caller, services }) {
    return { status: 200, body: await services.snippets.userAgentDetail(caller, subject, params.snippet_id) };
  },

  async listSnippets({ params, caller, services, request }) {
    const records = await services.snippets.listPersonal(caller, 'own', params, request);
    return { status: 200, body: many(records, request.externalUrl), headers: records.headers };
  },

  async listPublicSnippets({ params, caller, services, request }) {
    const records = await services.snippets.listPersonal(caller, 'public', params, request);
    return { status: 200, body: many(records, request.externalUrl), headers: records.headers };
  },

  async listAllSnippets({ params, caller, services, request }) {
    const records = await services.snippets.listPersonal(caller, 'all', params, request);
    return { status: 200, body: many(records, request.externalUrl), headers: records.headers };
  },

  async createSnippet({ body, caller, services, request }) {
    const records = await services.snippets.create(caller, null, body, request);
    return { status: 201, body: one(records, request.externalUrl) };
  },

  async getSnippet({ params, caller, services, request }) {
    return { status: 200, body: one(await services.snippets.get(caller, params.id), request.externalUrl) };
  },

  async updateSnippet({ params, body, caller, services, request }) {
    const records = await services.snippets.updatePersonal(caller, params.id, body);
    return { status: 200, body: one(records, request.externalUrl) };
  },

  async deleteSnippet({ params, caller, services }) {
    await services.snippets.removePersonal(caller, params.id);
    return { status: 204, body: null };
  },

  async getSnippetRaw({ params, caller, services }) {
    return rawResponse(await services.snippets.raw(caller, null, params.id));
  },

  async getSnippetFileRaw({ params, caller, services }) {
    return rawResponse(
      await services.snippets.raw(caller, null, params.id, { ref: params.ref, filePath: params.file_path }),
    );
  },

  async getSnippetUserAgentDetail({ params, caller, services }) {
    return { status: 200, body: await services.snippets.userAgentDetail(caller, null, params.id) };
  },
});
