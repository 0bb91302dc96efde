/**
 * What other families add to merge requests, through their manifests' `contributes`: merge checks,
 * fields of the representation, hooks around creation and merge, and list filters. Approvals, and
 * later pipelines, statuses and code owners, each add theirs without editing this family.
 */
import type { EntityManager, SelectQueryBuilder } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import type { Contributions } from '../core/family.js';
import type { MergeRequest } from './merge-request.entity.js';
import type { ListMergeRequestsParams } from './merge-request-params.js';
import type {
  DetailedMergeStatus,
  MergeRequestProject,
  MergeRequestRecords,
  PageExtensions,
  PageIds,
} from './merge-request-records.js';

export type { DetailedMergeStatus, PageIds } from './merge-request-records.js';

type MergeRequestJson = components['schemas']['MergeRequest'];

/**
 * Data selected beside each page of merge requests, in the page's one statement: SQL giving a JSON
 * array of `[merge request id, value]`, or null when there is nothing to select (a tier without it).
 */
export type PageDataSql = (ids: PageIds) => string | null;

export type MergeCheckStatus = 'success' | 'failed' | 'inactive';

/** What a check reads: the merge request, its project, the page, and the data it selected for it. */
export interface MergeCheckInput {
  mr: MergeRequest;
  project: MergeRequestProject;
  records: MergeRequestRecords;
  /** This merge request's value from `data` (undefined without data or without a row). */
  data: unknown;
}

/** One of GitLab's mergeability checks. */
export interface MergeCheck {
  /** GitLab's identifier: the `detailed_merge_status` while it is the first to fail. */
  name: string;
  /** Why the merge request cannot merge while it fails. */
  message: string;
  /** Its place in GitLab's order of checks (lower first). */
  precedence: number;
  /** Shown as `detailed_merge_status`; false for a check whose status GitLab reports elsewhere. */
  reported: boolean;
  /** Holds a merge back until it passes (an automatic merge waits for it); false for what the merge finds in git. */
  blocksMerge: boolean;
  data?: PageDataSql;
  status(input: MergeCheckInput): MergeCheckStatus;
}

/** Fields a family adds to each merge request's representation. */
export interface MergeRequestFields {
  data?: PageDataSql;
  present(mr: MergeRequest, data: unknown): Partial<MergeRequestJson>;
}

/** A merge request as the hooks see it. */
export interface MergeRequestRef {
  id: number;
  targetProjectId: number;
  targetBranch: string;
}

/** Hooks around a merge request's creation and merge; each may refuse by throwing. */
export interface MergeRequestHooks {
  /** In the creation's transaction. */
  created?(tx: EntityManager, mr: MergeRequestRef): Promise<void>;
  /** Before the merge writes anything to the repository. */
  beforeMerge?(caller: Caller, mr: MergeRequest): Promise<void>;
  /** In the merge's transaction, once the merge request is merged. */
  merged?(tx: EntityManager, mr: MergeRequest, mergerId: number): Promise<void>;
}

/** Filters of the merge request lists that another family's data answers (`approved_by_ids`). */
export interface MergeRequestListFilter {
  apply(query: SelectQueryBuilder<MergeRequest>, params: ListMergeRequestsParams): void;
}

declare module '../core/family.js' {
  interface ContributionPoints {
    /** A family may add several checks (the merge requests family adds its own built-ins). */
    mergeChecks: readonly MergeCheck[];
    mergeRequestFields: MergeRequestFields;
    mergeRequestHooks: MergeRequestHooks;
    mergeRequestListFilters: MergeRequestListFilter;
  }
}

/** The contributions to merge requests, read once the services are built. */
export class MergeRequestExtensions implements PageExtensions {
  private built?: {
    checks: MergeCheck[];
    fields: MergeRequestFields[];
    hooks: MergeRequestHooks[];
    filters: MergeRequestListFilter[];
    sources: Array<{ owner: object; sql: PageDataSql }>;
  };

  constructor(private readonly contributions: Contributions) {}

  private get all() {
    if (this.built) return this.built;
    const checks = this.contributions
      .of('mergeChecks')
      .flat()
      .sort((a, b) => a.precedence - b.precedence);
    const fields = [...this.contributions.of('mergeRequestFields')];
    const sources = [...checks, ...fields].flatMap((owner) =>
      owner.data ? [{ owner, sql: owner.data }] : [],
    );
    this.built = {
      checks,
      fields,
      hooks: [...this.contributions.of('mergeRequestHooks')],
      filters: [...this.contributions.of('mergeRequestListFilters')],
      sources,
    };
    return this.built;
  }

  get hooks(): readonly MergeRequestHooks[] {
    return this.all.hooks;
  }

  applyListFilters(query: SelectQueryBuilder<MergeRequest>, params: ListMergeRequestsParams): void {
    for (const filter of this.all.filters) filter.apply(query, params);
  }

  /** The contributed columns of a page's statement (`, (…) AS x0, …`), with their owners. */
  dataColumns(ids: PageIds): { sql: string; owners: Array<{ owner: object; column: string }> } {
    let sql = '';
    const owners: Array<{ owner: object; column: string }> = [];
    this.all.sources.forEach(({ owner, sql: select }, index) => {
      const selected = select(ids);
      if (selected === null) return;
      sql += `, ${selected} AS x${index}`;
      owners.push({ owner, column: `x${index}` });
    });
    return { sql, owners };
  }

  private dataOf(records: MergeRequestRecords, owner: object, mr: MergeRequest): unknown {
    return records.extensionData.get(owner)?.get(mr.id);
  }

  private statusOf(check: MergeCheck, mr: MergeRequest, records: MergeRequestRecords): MergeCheckStatus {
    const project = records.projects.get(mr.targetProjectId)!;
    return check.status({ mr, project, records, data: this.dataOf(records, check, mr) });
  }

  /**
   * GitLab's precedence: a pending check first, then not open, then the first reported check that fails;
   * else mergeable.
   */
  detailedMergeStatus(mr: MergeRequest, records: MergeRequestRecords): DetailedMergeStatus {
    if (mr.state !== 'opened') return 'not_open';
    if (mr.mergeStatus === 'unchecked' || mr.mergeStatus === 'checking') return mr.mergeStatus;
    const failed = this.all.checks.find(
      (check) => check.reported && this.statusOf(check, mr, records) === 'failed',
    );
    return (failed?.name as DetailedMergeStatus | undefined) ?? 'mergeable';
  }

  /** The checks holding the merge back now (an automatic merge waits for them). */
  blockingChecks(mr: MergeRequest, records: MergeRequestRecords): MergeCheck[] {
    return this.all.checks.filter(
      (check) => check.blocksMerge && this.statusOf(check, mr, records) === 'failed',
    );
  }

  /** The contributed fields of one merge request's representation. */
  presentFields(mr: MergeRequest, records: MergeRequestRecords): Partial<MergeRequestJson> {
    const fields: Partial<MergeRequestJson> = {};
    for (const contribution of this.all.fields)
      Object.assign(fields, contribution.present(mr, this.dataOf(records, contribution, mr)));
    return fields;
  }
}
