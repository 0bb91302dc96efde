import type { Caller } from '../core/auth.js';
import { defineHandlers } from '../core/handler.js';
import { presentCommit } from '../commits/commit.presenter.js';
import type { ServiceRegistry } from '../core/family.js';
import { attachmentDisposition, type ArchiveFormat } from './archive.js';
import { presentBlob } from './blob.presenter.js';
import { presentCompare } from './compare.presenter.js';
import { presentContributor } from './contributor.presenter.js';
import { projectWebUrl } from '../projects/project.presenter.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { ArchiveParams } from './repository.service.js';
import { presentTreeEntry } from './tree-entry.presenter.js';

/** Both archive routes answer alike; only the format's source differs. */
async function archive(
  services: Pick<ServiceRegistry, 'repository'>,
  caller: Caller,
  view: ProjectView,
  format: ArchiveFormat,
  params: ArchiveParams,
) {
  const result = await services.repository.archive(caller, view, format, params);
  return {
    status: 200 as const,
    stream: result.stream,
    headers: {
      'Content-Type': result.contentType,
      'Content-Disposition': attachmentDisposition(result.filename),
      'Content-Transfer-Encoding': 'binary',
    },
  };
}

export const repositoryHandlers = defineHandlers(['repository'], {
  async listRepositoryTree({ params, subject, caller, services, request }) {
    const { entries, headers } = await services.repository.tree(caller, subject, params, request);
    return { status: 200, body: entries.map(presentTreeEntry), headers };
  },

  async getRepositoryBlob({ params, subject, caller, services, request }) {
    const { blob, content } = await services.repository.blob(caller, subject, params.sha, request);
    return { status: 200, body: presentBlob(blob, content) };
  },

  async getRepositoryBlobRaw({ params, subject, caller, services, request }) {
    const { blob, binary, stream } = await services.repository.rawBlob(caller, subject, params.sha, request);
    return {
      status: 200,
      stream,
      headers: {
        'Content-Type': binary ? 'application/octet-stream' : 'text/plain; charset=utf-8',
        'Content-Disposition': binary ? 'attachment' : 'inline',
        'Content-Length': String(blob.size),
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-cache, no-store',
        Pragma: 'no-cache',
        Expires: 'Fri, 01 Jan 1990 00:00:00 GMT',
      },
    };
  },

  getRepositoryArchive({ params, subject, caller, services }) {
    return archive(services, caller, subject, 'tar.gz', params);
  },

  getRepositoryArchiveInFormat({ params, subject, caller, services }) {
    return archive(services, caller, subject, params.format, params);
  },

  async compareRepositoryRefs({ params, subject, caller, services, request }) {
    const { repo, comparison } = await services.repository.compare(caller, subject, params, params.id);
    const body = presentCompare(
      comparison,
      projectWebUrl(repo.view, request.externalUrl),
      params.unidiff ?? false,
    );
    return { status: 200, body };
  },

  async listRepositoryContributors({ params, subject, caller, services, request }) {
    const { contributors, headers } = await services.repository.contributors(
      caller,
      subject,
      params,
      request,
    );
    return { status: 200, body: contributors.map(presentContributor), headers };
  },

  async getRepositoryMergeBase({ params, subject, caller, services, request }) {
    const { repo, commit } = await services.repository.mergeBase(caller, subject, params.refs);
    return { status: 200, body: presentCommit(commit, projectWebUrl(repo.view, request.externalUrl)) };
  },
});
