import { presentCommit } from '../commits/commit.presenter.js';
import { projectWebUrl } from '../projects/project.presenter.js';
import { defineHandlers } from '../core/handler.js';
import { contentDisposition, fileHeaders, presentRepositoryFile } from './file.presenter.js';

/** Raw files are never cached, as in GitLab. */
const NO_CACHE = {
  'Cache-Control': 'max-age=0, private, must-revalidate, no-store, no-cache',
  Pragma: 'no-cache',
  Expires: 'Fri, 01 Jan 1990 00:00:00 GMT',
};

export const filesHandlers = defineHandlers(['files'], {
  // Also serves HEAD, whose answer keeps only the X-Gitlab-* headers.
  async getRepositoryFile({ params, subject, caller, services }) {
    const { info, content, sha256 } = await services.files.read(
      caller,
      subject,
      params.file_path,
      params.ref,
    );
    return {
      status: 200,
      body: presentRepositoryFile(info, content, sha256),
      headers: fileHeaders(info, sha256),
    };
  },

  async getRepositoryFileBlame({ params, subject, caller, services, request }) {
    const { file, ranges } = await services.files.blame(
      caller,
      subject,
      params.file_path,
      params.ref,
      params.range,
    );
    const webUrl = projectWebUrl(file.info.repo.view, request.externalUrl);
    const body = ranges.map((range) => ({ commit: presentCommit(range.commit, webUrl), lines: range.lines }));
    return { status: 200, body, headers: fileHeaders(file.info, file.sha256) };
  },

  async getRepositoryFileRaw({ params, subject, caller, services }) {
    const { info, sha256, binary, stream } = await services.files.raw(
      caller,
      subject,
      params.file_path,
      params.ref,
    );
    return {
      status: 200,
      stream,
      headers: {
        ...fileHeaders(info, sha256),
        ...NO_CACHE,
        'Content-Type': binary ? 'application/octet-stream' : 'text/plain; charset=utf-8',
        'Content-Length': String(info.size),
        'Content-Disposition': contentDisposition(info.fileName),
      },
    };
  },

  async createRepositoryFile({ params, subject, body, caller, services }) {
    await services.files.create(caller, subject, params.file_path, body);
    return { status: 201, body: { file_path: params.file_path, branch: body.branch } };
  },

  async updateRepositoryFile({ params, subject, body, caller, services }) {
    await services.files.update(caller, subject, params.file_path, body);
    return { status: 200, body: { file_path: params.file_path, branch: body.branch } };
  },

  async deleteRepositoryFile({ params, subject, body, caller, services }) {
    await services.files.delete(caller, subject, params.file_path, body);
    return { status: 204, body: null };
  },
});
