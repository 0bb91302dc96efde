/**
 * One merge request: finding it, its detailed read and the records every read presents, its commits,
 * diffs and versions, and its time tracking. Lists, writes and merging are services of their own.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { projectAccessLevels } from '../core/abilities.js';
import { canRecheckMergeStatus } from './abilities.js';
import type { Caller } from '../core/auth.js';
import { badParameter, forbidden, recordNotFound } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { offsetHeaders, perPageOf, type Page, type RequestInfo } from '../core/pagination.js';
import { preparedQuery } from '../db/prepared.js';
import { EMPTY_TREE, type DiffResult } from '../git/diffs.js';
import type { GitCommit } from '../git/repository.js';
import type { ProjectView } from '../projects/projects.service.js';
import { projectSettings } from '../projects/project-settings.js';
import type { User } from '../users/user.entity.js';
import { parseDuration } from './durations.js';
import { MergeRequestExtensions } from './extension-points.js';
import { MergeRequest, MergeRequestDiff } from './merge-request.entity.js';
import type { PageParams } from './merge-request-params.js';
import {
  MergeRequestRecordsReader,
  relatedSql,
  type MergeRequestDetailRecords,
  type MergeRequestRecords,
  type RelatedRow,
  type VersionDiffs,
} from './merge-request-records.js';
import type { MergeRequestVersions } from './merge-request-versions.js';

export type {
  MergeRequestDetailRecords,
  MergeRequestProject,
  MergeRequestRecords,
  VersionDiffs,
} from './merge-request-records.js';
export type {
  CreateMergeRequestParams,
  ListMergeRequestsParams,
  UpdateMergeRequestParams,
} from './merge-request-params.js';

/** The page statement by ids: $1 the merge requests, $2 the users they name, $3 their projects, $4 their milestones, $5 the open ones. */
const BY_IDS = {
  all: '$1::int[]',
  users: '$2::int[]',
  projects: '$3::int[]',
  milestones: '$4::int[]',
  open: '$5::int[]',
};

export class MergeRequestsService {
  private readonly dataSource: DataSource;
  /** What other families add to merge requests (checks, fields, hooks, list filters). */
  readonly extensions: MergeRequestExtensions;
  private readonly reader: MergeRequestRecordsReader;
  /** The page statement by ids, once the contributions are known. */
  private byIds?: { sql: string; open: boolean; contributed: Array<{ owner: object; column: string }> };

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<
      ServiceRegistry,
      'repositories' | 'mergeRequestVersions' | 'protectedRefs'
    >,
  ) {
    this.dataSource = deps.dataSource;
    this.extensions = new MergeRequestExtensions(deps.contributions);
    this.reader = new MergeRequestRecordsReader(this.dataSource, this.extensions);
  }

  private get versions(): MergeRequestVersions {
    return this.services.mergeRequestVersions;
  }

  /** Merge requests turned off in the project answer 403, as GitLab's `read_merge_request` does. */
  assertEnabled(view: ProjectView): void {
    if (!projectSettings(view.project.settings).merge_requests_enabled) throw forbidden();
  }

  /** Queues checks for the caller's page, for those allowed to ask (Developer and above in each project). */
  async recheck(caller: Caller, items: MergeRequest[], view: ProjectView | null): Promise<void> {
    const open = items.filter((mr) => mr.state === 'opened');
    // Every project of the page in one query when the list spans projects.
    const levels = view
      ? null
      : await projectAccessLevels(this.dataSource.manager, caller, [
          ...new Set(open.map((mr) => mr.targetProjectId)),
        ]);
    const allowed = open.filter((mr) =>
      canRecheckMergeStatus(caller, view ? view.accessLevel : (levels!.get(mr.targetProjectId)?.level ?? 0)),
    );
    if (allowed.length === 0) return;
    await this.dataSource.transaction(async (tx) => {
      for (const mr of allowed) {
        await tx
          .getRepository(MergeRequest)
          .update({ id: mr.id, mergeStatus: 'can_be_merged' }, { mergeStatus: 'unchecked' });
        await tx
          .getRepository(MergeRequest)
          .update({ id: mr.id, mergeStatus: 'cannot_be_merged' }, { mergeStatus: 'unchecked' });
        await this.versions.requestCheck(tx, mr.id);
      }
    });
  }

  /**
   * Projects, users, assignees, reviewers, note counts, labels, milestones and contributed data of a
   * page: one statement whatever the page's size.
   */
  async related(manager: EntityManager, items: MergeRequest[]): Promise<MergeRequestRecords> {
    const ids = items.map((mr) => mr.id);
    const userIds = new Set<number>();
    for (const mr of items)
      for (const id of [mr.authorId, mr.closedById, mr.mergeUserId]) if (id !== null) userIds.add(id);
    const projectIds = [...new Set(items.map((mr) => mr.targetProjectId))];
    const milestoneIds = [
      ...new Set(items.flatMap((mr) => (mr.milestoneId === null ? [] : [mr.milestoneId]))),
    ];
    const { sql, open, contributed } = this.relatedByIds();
    const values: unknown[] = [ids, [...userIds], projectIds, milestoneIds];
    if (open) values.push(items.filter((mr) => mr.state === 'opened').map((mr) => mr.id));
    const [row] =
      manager === this.dataSource.manager
        ? await preparedQuery<RelatedRow>(this.dataSource, sql, values)
        : ((await manager.query(sql, values)) as RelatedRow[]);
    return this.reader.read(manager, items, row, contributed);
  }

  private relatedByIds() {
    if (this.byIds) return this.byIds;
    const related = relatedSql(BY_IDS, this.extensions);
    const sql = `WITH ${related.ctes} SELECT ${related.columns}`;
    return (this.byIds = { sql, open: sql.includes(BY_IDS.open), contributed: related.contributed });
  }

  /** The records of a page from the row `relatedSql` selected. */
  recordsOf(
    manager: EntityManager,
    items: MergeRequest[],
    row: RelatedRow,
    contributed: Array<{ owner: object; column: string }>,
  ): Promise<MergeRequestRecords> {
    return this.reader.read(manager, items, row, contributed);
  }

  // ---- one merge request ----

  /** The merge request `iid` of the project: 404 `Not found` when there is none. */
  async find(
    view: ProjectView,
    iid: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<MergeRequest> {
    this.assertEnabled(view);
    const mr = await manager.getRepository(MergeRequest).findOneBy({ targetProjectId: view.project.id, iid });
    if (!mr) throw recordNotFound();
    return mr;
  }

  async get(
    caller: Caller,
    view: ProjectView,
    iid: number,
    recheck = false,
  ): Promise<MergeRequestDetailRecords> {
    const mr = await this.find(view, iid);
    if (recheck) await this.recheck(caller, [mr], view);
    return this.detail(caller, view, mr.id);
  }

  /** The single read: the records, the latest version, and what only it shows. */
  async detail(caller: Caller, view: ProjectView, id: number): Promise<MergeRequestDetailRecords> {
    const mr = await this.dataSource.getRepository(MergeRequest).findOneByOrFail({ id });
    const records = await this.related(this.dataSource.manager, [mr]);
    const diff = (await this.versions.latest(this.dataSource.manager, [mr.id])).get(mr.id) ?? null;
    const { git } = this.services.repositories.open(view);
    let canMerge = false;
    if (caller.user) {
      const actor = await this.services.protectedRefs.actor(caller, view.accessLevel);
      canMerge = await this.services.protectedRefs.mayMerge(view.project.id, actor, mr.targetBranch);
    }
    const [earlier] = (await this.dataSource.query(
      `SELECT 1 FROM merge_requests WHERE target_project_id = $1 AND author_id = $2 AND state = 'merged'
         AND id <> $3 AND ($4::timestamptz IS NULL OR merged_at < $4) LIMIT 1`,
      [view.project.id, mr.authorId, mr.id, mr.mergedAt],
    )) as unknown[];
    let divergedCommitsCount = 0;
    if (mr.state === 'opened' && diff) {
      const target = await git.resolveCommit(`refs/heads/${mr.targetBranch}`);
      if (target) divergedCommitsCount = await git.countCommits(diff.headCommitSha, target);
    }
    return {
      ...records,
      details: { diff, canMerge, firstContribution: !earlier, divergedCommitsCount },
    };
  }

  // ---- commits, diffs, versions, participants ----

  private async latestDiff(mr: MergeRequest): Promise<MergeRequestDiff | null> {
    return (await this.versions.latest(this.dataSource.manager, [mr.id])).get(mr.id) ?? null;
  }

  /** The commits of a version, newest first: from the merge base (excluded) to the head. */
  private async versionCommits(
    view: ProjectView,
    diff: MergeRequestDiff | null,
    skip: number,
    count: number,
  ): Promise<GitCommit[]> {
    if (!diff || count <= 0) return [];
    const range = diff.baseCommitSha ? `${diff.baseCommitSha}..${diff.headCommitSha}` : diff.headCommitSha;
    return this.services.repositories.open(view).git.log({ revisions: [range], skip, maxCount: count });
  }

  async commits(
    view: ProjectView,
    iid: number,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<GitCommit>> {
    const diff = await this.latestDiff(await this.find(view, iid));
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const items = await this.versionCommits(view, diff, (page - 1) * perPage, perPage);
    return { items, headers: offsetHeaders(diff?.commitsCount ?? 0, page, perPage, request) };
  }

  /** A version's file diffs, with the paths that are generated at its head (as compare marks them). */
  private async versionDiffs(view: ProjectView, diff: MergeRequestDiff | null): Promise<VersionDiffs> {
    if (!diff) return { diffs: [], overflow: false, generated: new Set() };
    const { git } = this.services.repositories.open(view);
    const result = await git.diffs(diff.baseCommitSha ?? EMPTY_TREE, diff.headCommitSha);
    const paths = result.diffs.filter((file) => !file.deletedFile).map((file) => file.newPath);
    const generated =
      paths.length > 0 ? await git.generatedPaths(diff.headCommitSha, paths) : new Set<string>();
    return { ...result, generated };
  }

  async changes(
    caller: Caller,
    view: ProjectView,
    iid: number,
  ): Promise<MergeRequestDetailRecords & { changes: VersionDiffs }> {
    const mr = await this.find(view, iid);
    const detail = await this.detail(caller, view, mr.id);
    return { ...detail, changes: await this.versionDiffs(view, detail.details.diff) };
  }

  async diffs(
    view: ProjectView,
    iid: number,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<DiffResult['diffs'][number]> & { generated: Set<string> }> {
    const { diffs, generated } = await this.versionDiffs(
      view,
      await this.latestDiff(await this.find(view, iid)),
    );
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    return {
      items: diffs.slice((page - 1) * perPage, page * perPage),
      headers: offsetHeaders(diffs.length, page, perPage, request),
      generated,
    };
  }

  async participants(view: ProjectView, iid: number): Promise<User[]> {
    const mr = await this.find(view, iid);
    const records = await this.related(this.dataSource.manager, [mr]);
    const ids = [
      mr.authorId,
      ...(records.assignees.get(mr.id) ?? []),
      ...(records.reviewers.get(mr.id) ?? []),
    ];
    const seen = new Set<number>();
    const users: User[] = [];
    for (const id of ids) {
      if (id === null || seen.has(id)) continue;
      seen.add(id);
      const user = records.users.get(id);
      if (user) users.push(user);
    }
    return users;
  }

  async listVersions(
    view: ProjectView,
    iid: number,
    params: PageParams,
    request: RequestInfo,
  ): Promise<Page<MergeRequestDiff>> {
    const mr = await this.find(view, iid);
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const [items, total] = await this.dataSource.getRepository(MergeRequestDiff).findAndCount({
      where: { mergeRequestId: mr.id },
      order: { id: 'DESC' },
      skip: (page - 1) * perPage,
      take: perPage,
    });
    return { items, headers: offsetHeaders(total, page, perPage, request) };
  }

  async version(
    view: ProjectView,
    iid: number,
    versionId: number,
  ): Promise<{ version: MergeRequestDiff; commits: GitCommit[]; diffs: VersionDiffs }> {
    const mr = await this.find(view, iid);
    const version = await this.dataSource
      .getRepository(MergeRequestDiff)
      .findOneBy({ id: versionId, mergeRequestId: mr.id });
    if (!version) throw recordNotFound();
    const [commits, diffs] = await Promise.all([
      this.versionCommits(view, version, 0, version.commitsCount),
      this.versionDiffs(view, version),
    ]);
    return { version, commits, diffs };
  }

  // ---- time tracking ----

  async timeStats(view: ProjectView, iid: number): Promise<MergeRequest> {
    return this.find(view, iid);
  }

  async setTimeEstimate(view: ProjectView, iid: number, duration: string | null): Promise<MergeRequest> {
    const seconds = duration === null ? 0 : parseDuration(duration);
    if (seconds === null || seconds < 0) throw badParameter('duration is invalid');
    return this.changeTime(view, iid, { timeEstimate: seconds });
  }

  async addSpentTime(view: ProjectView, iid: number, duration: string | null): Promise<MergeRequest> {
    if (duration === null) return this.changeTime(view, iid, { totalTimeSpent: 0 });
    const seconds = parseDuration(duration);
    if (seconds === null) throw badParameter('duration is invalid');
    const mr = await this.find(view, iid);
    await this.dataSource.query(
      `UPDATE merge_requests SET total_time_spent = LEAST(GREATEST(total_time_spent + $2::bigint, 0), 2147483647),
         updated_at = now() WHERE id = $1`,
      [mr.id, seconds],
    );
    return this.dataSource.getRepository(MergeRequest).findOneByOrFail({ id: mr.id });
  }

  private async changeTime(
    view: ProjectView,
    iid: number,
    change: Partial<MergeRequest>,
  ): Promise<MergeRequest> {
    const mr = await this.find(view, iid);
    await this.dataSource.getRepository(MergeRequest).update(mr.id, { ...change, updatedAt: new Date() });
    return this.dataSource.getRepository(MergeRequest).findOneByOrFail({ id: mr.id });
  }
}
