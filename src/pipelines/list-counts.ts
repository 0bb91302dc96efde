import type { DataSource } from 'typeorm';
import { ChangeCache } from '../db/change-cache.js';
import { changeFeed } from '../db/changes.js';

/** Parameters that change a list's order or window, not what it counts. */
const NEUTRAL = new Set(['id', 'page', 'per_page', 'order_by', 'sort', 'pagination']);
/** Filters that read other tables than pipelines and jobs, whose changes are not announced here. */
const UNCOUNTABLE = new Set(['username']);

/**
 * The totals of a project's pipeline and job lists, kept until a statement changes that project's
 * pipelines or jobs (migration PipelineChanges announces `pipelines:<project>`).
 */
export class PipelineListCounts {
  readonly cache: ChangeCache<string, number>;

  constructor(dataSource: DataSource) {
    this.cache = new ChangeCache<string, number>(
      changeFeed(dataSource),
      10_000,
      10 * 60_000,
      ['pipelines'],
      (key, _count, change) => key.startsWith(`${change.id}:`),
    );
  }

  /** Where the count of `list` with `params` is kept, or undefined when it must always be counted. */
  counts(list: string, projectId: number, params: object) {
    const filters = Object.entries(params).filter(
      ([name, value]) => value !== undefined && !NEUTRAL.has(name),
    );
    if (filters.some(([name]) => UNCOUNTABLE.has(name))) return undefined;
    filters.sort(([a], [b]) => (a < b ? -1 : 1));
    return { cache: this.cache, key: `${projectId}:${list}:${JSON.stringify(filters)}` };
  }
}
