import { defineHandlers } from '../core/handler.js';
import { pagedResponse, type RequestInfo } from '../core/pagination.js';
import type { OpenRepository } from '../repository/repositories.service.js';
import { presentTag, presentTagSignature } from './tag.presenter.js';

/** Where commit links of this project's tags point. */
const webUrl = ({ view }: OpenRepository, request: RequestInfo) =>
  `${request.externalUrl}/${view.project.namespace.fullPath}/${view.project.path}`;

export const tagsHandlers = defineHandlers(['tags'], {
  async listRepositoryTags({ params, subject, caller, services, request }) {
    const { repository, page } = await services.tags.list(caller, subject, params, request);
    const url = webUrl(repository, request);
    return pagedResponse(page, (tag) => presentTag(tag, url));
  },

  async getRepositoryTag({ params, subject, caller, services, request }) {
    const { repository, tag } = await services.tags.find(caller, subject, params.tag_name);
    return { status: 200, body: presentTag(tag, webUrl(repository, request)) };
  },

  async createRepositoryTag({ subject, body, caller, services, request }) {
    const { repository, tag } = await services.tags.create(caller, subject, body!);
    return { status: 201, body: presentTag(tag, webUrl(repository, request)) };
  },

  async deleteRepositoryTag({ params, subject, caller, services }) {
    await services.tags.delete(caller, subject, params.tag_name);
    return { status: 204, body: null };
  },

  async getRepositoryTagSignature({ params, subject, caller, services }) {
    const signature = await services.tags.signature(caller, subject, params.tag_name);
    return { status: 200, body: presentTagSignature(signature) };
  },
});
