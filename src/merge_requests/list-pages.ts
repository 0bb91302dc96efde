import type { DataSource } from 'typeorm';
import type { Caller } from '../core/auth.js';
import { utcToday } from '../core/clock.js';
import type { RequestInfo } from '../core/pagination.js';
import { ChangeCache, type Change } from '../db/change-cache.js';
import { changeFeed } from '../db/changes.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { ListMergeRequestsParams } from './merge-request-params.js';
import type { MergeRequestRecords } from './merge-request-records.js';

/** A list's page as answered: the body, serialized, and its headers. */
export interface ListAnswer {
  text: string;
  headers: Record<string, string>;
}

interface KeptPage extends ListAnswer {
  /** The target project and the source projects of its merge requests from forks. */
  projects: ReadonlySet<number>;
  /** The target project's namespace and the groups above it. */
  namespaces: ReadonlySet<number>;
  /** Everyone the page shows. */
  users: ReadonlySet<number>;
  /** Whether a filter names a user by username, which a rename changes. */
  namesUsers: boolean;
}

/** `Started` and `Upcoming` depend on every milestone of the project's, not only on those shown. */
const MOVING_MILESTONES = new Set(['started', 'upcoming']);

function keepable(params: ListMergeRequestsParams): boolean {
  // A recheck writes merge statuses: it must run every time.
  if (params.with_merge_status_recheck) return false;
  const milestones = [params.milestone, params.not?.milestone];
  return !milestones.some((title) => title !== undefined && MOVING_MILESTONES.has(title.toLowerCase()));
}

const namesUsers = (params: ListMergeRequestsParams) =>
  [...Object.keys(params), ...Object.keys(params.not ?? {})].some((name) => name.endsWith('_username'));

function pageChangedBy(page: KeptPage, change: Change): boolean {
  switch (change.kind) {
    case 'merge_requests':
    case 'merge_request_records':
    case 'project':
      return page.projects.has(change.id);
    case 'namespace':
      return page.namespaces.has(change.id);
    case 'user':
      return page.users.has(change.id) || page.namesUsers;
    default:
      return true;
  }
}

const BUDGET_CHARS = 16 * 1024 * 1024;
const PAGE_TTL_MS = 30_000;

/**
 * Pages of projects' merge request lists as answered, kept until the database announces a change to
 * anything they show: the merge requests' rows, what is presented beside them (assignees, reviewers,
 * notes, reactions, labels, milestones, approvals and what decides them: migration
 * MergeRequestRecordChanges), the projects, namespaces and users named, and access. Keyed by the
 * caller (`scope`, `my_reaction_emoji`), the UTC day (milestones' `expired`) and the request's path and
 * query as sent, which make its pagination links.
 */
export class MergeRequestListPages {
  private readonly pages: ChangeCache<string, KeptPage>;

  constructor(dataSource: DataSource) {
    this.pages = new ChangeCache(
      changeFeed(dataSource),
      BUDGET_CHARS,
      PAGE_TTL_MS,
      ['merge_requests', 'merge_request_records', 'project', 'namespace', 'user', 'labels', 'access'],
      (_key, page, change) => pageChangedBy(page, change),
      (page) => page.text.length + 1024,
    );
  }

  /**
   * The page of a project's list, from memory or made by `read` and `present`. The caller must have
   * been authorized for the project, and its merge requests checked to be enabled.
   */
  async answer(
    caller: Caller,
    view: ProjectView,
    params: ListMergeRequestsParams,
    request: RequestInfo,
    read: () => Promise<MergeRequestRecords & { headers: Record<string, string> }>,
    present: (page: MergeRequestRecords) => unknown,
  ): Promise<ListAnswer> {
    const day = utcToday();
    const key = keepable(params)
      ? `${caller.user?.id ?? 0}\n${day}\n${request.apiPath}\n${JSON.stringify(request.query)}`
      : undefined;
    const kept = key === undefined ? undefined : this.pages.get(key);
    if (kept) return kept;
    const mark = this.pages.mark();
    const page = await read();
    const answer = { text: JSON.stringify(present(page)), headers: page.headers };
    if (key !== undefined && utcToday() === day) {
      const namespace = view.project.namespace;
      this.pages.set(
        key,
        {
          ...answer,
          projects: new Set([view.project.id, ...page.items.map((mr) => mr.sourceProjectId ?? 0)]),
          namespaces: new Set([namespace.id, ...(namespace.traversalIds ?? [])]),
          users: new Set(page.users.keys()),
          namesUsers: namesUsers(params),
        },
        mark,
      );
    }
    return answer;
  }
}
