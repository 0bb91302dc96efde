import { defineHandlers } from '../core/handler.js';
import { SerializedJson } from '../core/http.js';
import type { RequestInfo } from '../core/pagination.js';
import { projectWebUrl } from '../projects/project.presenter.js';
import type { ProjectView } from '../projects/projects.service.js';
import { presentUserSummary } from '../users/user.presenter.js';
import {
  presentDiffs,
  presentMergeRequest,
  presentMergeRequestDetail,
  presentMergeRequestSimple,
  presentTimeStats,
  presentVersion,
  presentVersionCommits,
} from './merge-request.presenter.js';
import type { ListScope } from './merge-request-lists.js';
import type { ListMergeRequestsParams, MergeRequestRecords } from './merge-requests.service.js';
import type { ServiceRegistry } from '../core/family.js';
import type { Caller } from '../core/auth.js';

async function list(
  services: Pick<ServiceRegistry, 'mergeRequestLists' | 'mergeRequests'>,
  caller: Caller,
  where: ListScope,
  params: ListMergeRequestsParams,
  request: RequestInfo,
) {
  const mergeRequests = services.mergeRequestLists;
  const present = params.view === 'simple' ? presentMergeRequestSimple : presentMergeRequest;
  const presentPage = (page: MergeRequestRecords) =>
    page.items.map((mr) => present(mr, page, request.externalUrl));
  const read = () => mergeRequests.list(caller, where, params, request);
  if (!('project' in where)) {
    const page = await read();
    return { status: 200 as const, body: presentPage(page), headers: page.headers };
  }
  services.mergeRequests.assertEnabled(where.project);
  const answer = await mergeRequests.listPages.answer(
    caller,
    where.project,
    params,
    request,
    read,
    presentPage,
  );
  return {
    status: 200 as const,
    body: new SerializedJson<ReturnType<typeof presentPage>>(answer.text),
    headers: answer.headers,
  };
}

const webUrlOf = (view: ProjectView, request: RequestInfo) => projectWebUrl(view, request.externalUrl);

export const mergeRequestsHandlers = defineHandlers(
  ['mergeRequestLists', 'mergeRequestMerging', 'mergeRequests', 'mergeRequestWrites'],
  {
    listMergeRequests: ({ params, caller, services, request }) =>
      list(services, caller, { instance: true }, params, request),

    listGroupMergeRequests: ({ params, subject, caller, services, request }) =>
      list(services, caller, { group: subject }, params, request),

    listProjectMergeRequests: ({ params, subject, caller, services, request }) =>
      list(services, caller, { project: subject }, params, request),

    async createMergeRequest({ subject, body, caller, services, request }) {
      const records = await services.mergeRequestWrites.create(caller, subject, body);
      return { status: 201, body: presentMergeRequestDetail(records, request.externalUrl) };
    },

    async getMergeRequest({ params, subject, caller, services, request }) {
      const records = await services.mergeRequests.get(
        caller,
        subject,
        params.merge_request_iid,
        params.with_merge_status_recheck === true,
      );
      return { status: 200, body: presentMergeRequestDetail(records, request.externalUrl) };
    },

    async updateMergeRequest({ params, subject, body, caller, services, request }) {
      const records = await services.mergeRequestWrites.update(
        caller,
        subject,
        params.merge_request_iid,
        body ?? {},
      );
      return { status: 200, body: presentMergeRequestDetail(records, request.externalUrl) };
    },

    async deleteMergeRequest({ params, subject, services }) {
      await services.mergeRequestWrites.remove(subject, params.merge_request_iid);
      return { status: 204, body: null };
    },

    async listMergeRequestCommits({ params, subject, services, request }) {
      const page = await services.mergeRequests.commits(subject, params.merge_request_iid, params, request);
      return {
        status: 200,
        body: presentVersionCommits(page.items, webUrlOf(subject, request)),
        headers: page.headers,
      };
    },

    async getMergeRequestChanges({ params, subject, caller, services, request }) {
      const records = await services.mergeRequests.changes(caller, subject, params.merge_request_iid);
      return {
        status: 200,
        body: {
          ...presentMergeRequestDetail(records, request.externalUrl),
          changes: presentDiffs(records.changes, params.unidiff === true),
          overflow: records.changes.overflow,
        },
      };
    },

    async listMergeRequestDiffs({ params, subject, services, request }) {
      const page = await services.mergeRequests.diffs(subject, params.merge_request_iid, params, request);
      return {
        status: 200,
        body: presentDiffs({ diffs: page.items, generated: page.generated }, params.unidiff === true),
        headers: page.headers,
      };
    },

    async listMergeRequestParticipants({ params, subject, services, request }) {
      const users = await services.mergeRequests.participants(subject, params.merge_request_iid);
      return { status: 200, body: users.map((user) => presentUserSummary(user, request.externalUrl)) };
    },

    async listMergeRequestVersions({ params, subject, services, request }) {
      const page = await services.mergeRequests.listVersions(
        subject,
        params.merge_request_iid,
        params,
        request,
      );
      return { status: 200, body: page.items.map(presentVersion), headers: page.headers };
    },

    async getMergeRequestVersion({ params, subject, services, request }) {
      const { version, commits, diffs } = await services.mergeRequests.version(
        subject,
        params.merge_request_iid,
        params.version_id,
      );
      return {
        status: 200,
        body: {
          ...presentVersion(version),
          commits: presentVersionCommits(commits, webUrlOf(subject, request)),
          diffs: presentDiffs(diffs, params.unidiff === true),
        },
      };
    },

    async setMergeRequestTimeEstimate({ params, subject, body, services }) {
      const mr = await services.mergeRequests.setTimeEstimate(
        subject,
        params.merge_request_iid,
        body.duration,
      );
      return { status: 200, body: presentTimeStats(mr) };
    },

    async resetMergeRequestTimeEstimate({ params, subject, services }) {
      const mr = await services.mergeRequests.setTimeEstimate(subject, params.merge_request_iid, null);
      return { status: 200, body: presentTimeStats(mr) };
    },

    async addMergeRequestSpentTime({ params, subject, body, services }) {
      const mr = await services.mergeRequests.addSpentTime(subject, params.merge_request_iid, body.duration);
      return { status: 201, body: presentTimeStats(mr) };
    },

    async resetMergeRequestSpentTime({ params, subject, services }) {
      const mr = await services.mergeRequests.addSpentTime(subject, params.merge_request_iid, null);
      return { status: 200, body: presentTimeStats(mr) };
    },

    async mergeMergeRequest({ params, subject, body, caller, services, request }) {
      const records = await services.mergeRequestMerging.merge(
        caller,
        subject,
        params.merge_request_iid,
        body ?? {},
      );
      return { status: 200, body: presentMergeRequestDetail(records, request.externalUrl) };
    },

    async getMergeRequestMergeRef({ params, subject, services }) {
      const commitId = await services.mergeRequestMerging.mergeRef(subject, params.merge_request_iid);
      return { status: 200, body: { commit_id: commitId } };
    },

    async rebaseMergeRequest({ params, subject, caller, services }) {
      const queued = await services.mergeRequestMerging.requestRebase(
        caller,
        subject,
        params.merge_request_iid,
      );
      return { status: 202, body: { rebase_in_progress: queued } };
    },

    async cancelMergeRequestAutoMerge({ params, subject, caller, services, request }) {
      const records = await services.mergeRequestMerging.cancelAutoMerge(
        caller,
        subject,
        params.merge_request_iid,
      );
      return { status: 201, body: presentMergeRequestDetail(records, request.externalUrl) };
    },

    async getMergeRequestTimeStats({ params, subject, services }) {
      return {
        status: 200,
        body: presentTimeStats(await services.mergeRequests.timeStats(subject, params.merge_request_iid)),
      };
    },
  },
);
