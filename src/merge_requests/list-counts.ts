import type { DataSource } from 'typeorm';
import { utcToday } from '../core/clock.js';
import { ChangeCache, type Change } from '../db/change-cache.js';
import { changeFeed } from '../db/changes.js';
import type { ListMergeRequestsParams } from './merge-request-params.js';

/** What a list's filters do not change, or change through the merge request's own row only. */
const NEUTRAL = new Set(['id', 'page', 'per_page', 'order_by', 'sort', 'view', 'with_labels_details']);
const ROW_FILTERS = new Set([
  'state',
  'iids',
  'author_id',
  'merge_user_id',
  'created_after',
  'created_before',
  'updated_after',
  'updated_before',
  'source_branch',
  'target_branch',
  'search',
  'in',
  'wip',
  'labels',
  // Sets merge statuses, which no filter here reads.
  'with_merge_status_recheck',
]);
const ROW_NOT_FILTERS = new Set(['author_id', 'labels']);
const ROW_SCOPES = new Set([undefined, 'all', 'created_by_me', 'created-by-me']);

const isKeyword = (labels: string | undefined) =>
  labels === undefined || ['none', 'any'].includes(labels.toLowerCase());

/**
 * Whether a list's count can be kept, and whether it names labels: only filters on the merge request's
 * own row are announced when they change (migration MergeRequestChanges), so a list filtered through
 * other tables (assignees, reviewers, milestones, reactions, approvals, usernames) is always counted.
 */
function countable(params: ListMergeRequestsParams): { namesLabels: boolean } | undefined {
  for (const [name, value] of Object.entries(params))
    if (
      value !== undefined &&
      !NEUTRAL.has(name) &&
      !ROW_FILTERS.has(name) &&
      name !== 'not' &&
      name !== 'scope'
    )
      return undefined;
  if (!ROW_SCOPES.has(params.scope)) return undefined;
  const not = params.not ?? {};
  for (const [name, value] of Object.entries(not))
    if (value !== undefined && !ROW_NOT_FILTERS.has(name)) return undefined;
  return { namesLabels: !isKeyword(params.labels) || not.labels !== undefined };
}

interface Counted {
  count: number;
  /** The projects whose merge requests were counted. */
  projects: ReadonlySet<number>;
  namesLabels: boolean;
}

function countChangedBy(counted: Counted, change: Change): boolean {
  switch (change.kind) {
    case 'merge_requests':
      return counted.projects.has(change.id);
    case 'labels':
      return counted.namesLabels;
    default:
      return true;
  }
}

const COUNTS = 10_000;
const COUNT_TTL_MS = 30_000;

/**
 * Lists' capped counts, kept between the database's announcements of change to the merge requests they
 * counted: counting up to GitLab's limit walks as many index entries, the page only a few. Keyed by the
 * count's statement and values (which name the caller's readable set) and the UTC day (memberships
 * expire by day).
 */
export class MergeRequestListCounts {
  private readonly counts: ChangeCache<string, Counted>;

  constructor(dataSource: DataSource) {
    this.counts = new ChangeCache(
      changeFeed(dataSource),
      COUNTS,
      COUNT_TTL_MS,
      ['merge_requests', 'labels', 'access'],
      (_key, counted, change) => countChangedBy(counted, change),
    );
  }

  /** The key of a list's count (`sql` with the readable set's), or undefined when it cannot be kept. */
  keyOf(params: ListMergeRequestsParams, countSql: string, parameters: object): string | undefined {
    if (!countable(params)) return undefined;
    return `${utcToday()}\n${countSql}\n${JSON.stringify(parameters)}`;
  }

  get(key: string | undefined): number | undefined {
    return key === undefined ? undefined : this.counts.get(key)?.count;
  }

  mark(): number {
    return this.counts.mark();
  }

  set(key: string, params: ListMergeRequestsParams, count: number, projects: number[], mark: number): void {
    const namesLabels = countable(params)?.namesLabels ?? true;
    this.counts.set(key, { count, projects: new Set(projects), namesLabels }, mark);
  }
}
