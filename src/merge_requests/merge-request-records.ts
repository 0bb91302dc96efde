/**
 * Everything a page of merge requests is presented with, loaded in one statement: the SQL, and the
 * records read back from its row (contributed data included).
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { components } from '../../generated/openapi.js';
import { entityRows, type EntityRows } from '../db/rows.js';
import type { DiffResult } from '../git/diffs.js';
import { Label } from '../labels/label.entity.js';
import { Milestone } from '../milestones/milestone.entity.js';
import {
  milestoneOwnerPathSql,
  milestoneRecord,
  type MilestoneRecord,
} from '../milestones/milestones.service.js';
import { projectSettings, type ProjectSettings } from '../projects/project-settings.js';
import { User } from '../users/user.entity.js';
import type { MergeRequest, MergeRequestDiff } from './merge-request.entity.js';

/** The project a merge request belongs to, as its presentation needs it. */
export interface MergeRequestProject {
  id: number;
  fullPath: string;
  settings: ProjectSettings;
}

/** Merge requests with everything their presentation reads, loaded a page at a time. */
export interface MergeRequestRecords {
  items: MergeRequest[];
  projects: Map<number, MergeRequestProject>;
  users: Map<number, User>;
  assignees: Map<number, number[]>;
  reviewers: Map<number, number[]>;
  /** Notes written by users (not system notes), per merge request. */
  userNotesCounts: Map<number, number>;
  /** Merge requests with a thread not yet resolved. */
  unresolvedDiscussions: Set<number>;
  /** Each merge request's labels, sorted by name. */
  labels: Map<number, Label[]>;
  /** Milestones by id. */
  milestones: Map<number, MilestoneRecord>;
  /**
   * Merge requests from forks, each with whether collaboration is allowed now (GitLab's
   * `allow_collaboration`, which also asks `collaborative_push_possible?`); others are left out.
   */
  collaboration: Map<number, boolean>;
  /** `thumbsup` and `thumbsdown` reactions on each merge request (not on its notes). */
  votes: Map<number, { up: number; down: number }>;
  /** Labels as objects rather than names (`with_labels_details=true`). */
  withLabelsDetails?: boolean;
  /** Data contributed to the page, by its contribution, then by merge request id. */
  extensionData: Map<object, Map<number, unknown>>;
  /** The contributions that present and check the page (`MergeRequestExtensions`). */
  extensions: PageExtensions;
}

/** SQL `int[]` expressions naming a page's merge requests: all of them, and the open ones. */
export interface PageIds {
  all: string;
  open: string;
}

export type DetailedMergeStatus = components['schemas']['MergeRequest']['detailed_merge_status'];

/** What other families add to a page of merge requests, as the page's records use it. */
export interface PageExtensions {
  dataColumns(ids: PageIds): { sql: string; owners: Array<{ owner: object; column: string }> };
  detailedMergeStatus(mr: MergeRequest, records: MergeRequestRecords): DetailedMergeStatus;
  presentFields(mr: MergeRequest, records: MergeRequestRecords): Record<string, unknown>;
}

/** What only the single read adds. */
export interface MergeRequestDetails {
  diff: MergeRequestDiff | null;
  canMerge: boolean;
  firstContribution: boolean;
  divergedCommitsCount: number;
}

/** File diffs and which of their paths are generated files. */
export interface VersionDiffs extends DiffResult {
  generated: Set<string>;
}

export interface MergeRequestDetailRecords extends MergeRequestRecords {
  details: MergeRequestDetails;
}

/** SQL `int[]` expressions naming what a page's statement loads. */
export interface RelatedIds extends PageIds {
  users: string;
  projects: string;
  milestones: string;
}

/**
 * Everything a page of merge requests is presented with, by ids: the merge requests, the users they
 * name (author, closer, merger), their projects, their milestones, and what other families contribute
 * (`x0`, `x1`…). Rows come as JSON arrays (whole rows for users, labels and milestones), each aggregate
 * ordered as it is shown.
 */
export function relatedSql(ids: RelatedIds, extensions: PageExtensions) {
  const contributed = extensions.dataColumns(ids);
  return {
    ctes: `links AS (
      SELECT 'a' AS kind, merge_request_id, user_id FROM merge_request_assignees
      WHERE merge_request_id = ANY(${ids.all})
      UNION ALL
      SELECT 'r' AS kind, merge_request_id, user_id FROM merge_request_reviewers
      WHERE merge_request_id = ANY(${ids.all})
    ), labelled AS (
      SELECT mrl.merge_request_id, l.id, l.title FROM merge_request_labels mrl
      JOIN labels l ON l.id = mrl.label_id WHERE mrl.merge_request_id = ANY(${ids.all})
    )`,
    columns: `
      (SELECT json_agg(json_build_array(kind, merge_request_id, user_id) ORDER BY user_id) FROM links) AS links,
      (SELECT json_agg(u) FROM users u
       WHERE u.id IN (SELECT unnest(${ids.users}) UNION SELECT user_id FROM links)) AS users,
      (SELECT json_agg(json_build_array(p.id, n.full_path || '/' || p.path, p.settings))
       FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = ANY(${ids.projects})) AS projects,
      (SELECT json_agg(json_build_array(noteable_id, count, unresolved)) FROM (
         SELECT noteable_id, count(*)::int AS count, bool_or(type IS NOT NULL AND resolved_at IS NULL) AS unresolved
         FROM notes WHERE noteable_id = ANY(${ids.all}) AND NOT system GROUP BY noteable_id) c) AS notes,
      (SELECT json_agg(json_build_array(merge_request_id, id) ORDER BY title COLLATE "C", id) FROM labelled) AS labels,
      (SELECT json_agg(l) FROM labels l WHERE l.id IN (SELECT id FROM labelled)) AS label_rows,
      (SELECT json_agg(json_build_array(m, ${milestoneOwnerPathSql('m')}))
       FROM milestones m WHERE m.id = ANY(${ids.milestones})) AS milestones,
      (SELECT json_agg(json_build_array(merge_request_id, up, down)) FROM (
         SELECT merge_request_id, count(*) FILTER (WHERE name = 'thumbsup')::int AS up,
           count(*) FILTER (WHERE name = 'thumbsdown')::int AS down
         FROM award_emoji WHERE merge_request_id = ANY(${ids.all}) AND note_id IS NULL
           AND name IN ('thumbsup', 'thumbsdown') GROUP BY merge_request_id) v) AS votes${contributed.sql}`,
    contributed: contributed.owners,
  };
}

/** The row `relatedSql` selects; the contributed columns come as `[merge request id, value]` pairs. */
export interface RelatedRow {
  links: Array<[string, number, number]> | null;
  users: Array<Record<string, unknown>> | null;
  projects: Array<[number, string, Record<string, unknown> | null]> | null;
  notes: Array<[number, number, boolean]> | null;
  labels: Array<[number, number]> | null;
  label_rows: Array<Record<string, unknown>> | null;
  milestones: Array<[Record<string, unknown>, string]> | null;
  votes: Array<[number, number, number]> | null;
  [contributed: `x${number}`]: Array<[number, unknown]> | null;
}

/** Reads the records of a page back from the row `relatedSql` selects. */
export class MergeRequestRecordsReader {
  private readonly userRows: EntityRows<User>;
  private readonly labelRows: EntityRows<Label>;
  private readonly milestoneRows: EntityRows<Milestone>;

  constructor(
    dataSource: DataSource,
    private readonly extensions: PageExtensions,
  ) {
    this.userRows = entityRows(dataSource, User, 'u');
    this.labelRows = entityRows(dataSource, Label, 'l');
    this.milestoneRows = entityRows(dataSource, Milestone, 'm');
  }

  async read(
    manager: EntityManager,
    items: MergeRequest[],
    row: RelatedRow,
    contributed: Array<{ owner: object; column: string }>,
  ): Promise<MergeRequestRecords> {
    const { assignees, reviewers } = this.people(row);
    const users = new Map<number, User>();
    for (const json of row.users ?? []) {
      const user = this.userRows.fromJson(json);
      users.set(user.id, user);
    }
    // User notes and unresolved threads (resolvable notes: not system, in a thread).
    const userNotesCounts = new Map<number, number>();
    const unresolvedDiscussions = new Set<number>();
    for (const [noteableId, count, unresolved] of row.notes ?? []) {
      userNotesCounts.set(noteableId, count);
      if (unresolved) unresolvedDiscussions.add(noteableId);
    }
    // Upvotes and downvotes: `thumbsup` and `thumbsdown` on the merge request itself.
    const votes = new Map<number, { up: number; down: number }>();
    for (const [mergeRequestId, up, down] of row.votes ?? []) votes.set(mergeRequestId, { up, down });
    const extensionData = new Map<object, Map<number, unknown>>();
    for (const { owner, column } of contributed)
      extensionData.set(owner, new Map(row[column as `x${number}`] ?? []));
    return {
      items,
      projects: projectsOf(row),
      users,
      assignees,
      reviewers,
      userNotesCounts,
      unresolvedDiscussions,
      labels: this.labelsOf(row),
      milestones: this.milestonesOf(row),
      collaboration: await collaborationOf(manager, items),
      votes,
      extensionData,
      extensions: this.extensions,
    };
  }

  private people(row: RelatedRow) {
    const assignees = new Map<number, number[]>();
    const reviewers = new Map<number, number[]>();
    for (const [kind, mergeRequestId, userId] of row.links ?? []) {
      const map = kind === 'a' ? assignees : reviewers;
      map.set(mergeRequestId, [...(map.get(mergeRequestId) ?? []), userId]);
    }
    return { assignees, reviewers };
  }

  private labelsOf(row: RelatedRow): Map<number, Label[]> {
    const labelsById = new Map<number, Label>();
    for (const json of row.label_rows ?? []) {
      const label = this.labelRows.fromJson(json);
      labelsById.set(label.id, label);
    }
    const labels = new Map<number, Label[]>();
    for (const [mergeRequestId, labelId] of row.labels ?? []) {
      const label = labelsById.get(labelId);
      if (label) labels.set(mergeRequestId, [...(labels.get(mergeRequestId) ?? []), label]);
    }
    return labels;
  }

  private milestonesOf(row: RelatedRow): Map<number, MilestoneRecord> {
    const milestones = new Map<number, MilestoneRecord>();
    for (const [json, ownerPath] of row.milestones ?? []) {
      const milestone = this.milestoneRows.fromJson(json);
      milestones.set(milestone.id, milestoneRecord(milestone, ownerPath));
    }
    return milestones;
  }
}

function projectsOf(row: RelatedRow): Map<number, MergeRequestProject> {
  const projects = new Map<number, MergeRequestProject>();
  for (const [id, fullPath, stored] of row.projects ?? []) {
    projects.set(id, { id, fullPath, settings: projectSettings(stored ?? {}) });
  }
  return projects;
}

/**
 * For the merge requests from forks: stored `allow_collaboration`, while both projects are public or
 * internal and the fork does not protect the source branch. One query for a page.
 */
async function collaborationOf(manager: EntityManager, items: MergeRequest[]): Promise<Map<number, boolean>> {
  const forks = items.filter((mr) => mr.sourceProjectId !== mr.targetProjectId);
  if (forks.length === 0) return new Map();
  const rows = (await manager.query(
    `SELECT mr.id, COALESCE(mr.allow_collaboration AND s.visibility_level > 0 AND t.visibility_level > 0
       AND NOT EXISTS (SELECT 1 FROM protected_branches pb WHERE pb.project_id = mr.source_project_id
         AND mr.source_branch LIKE replace(replace(replace(replace(pb.name, '\\', '\\\\'), '%', '\\%'),
           '_', '\\_'), '*', '%')), false) AS allowed
     FROM merge_requests mr
     LEFT JOIN projects s ON s.id = mr.source_project_id
     JOIN projects t ON t.id = mr.target_project_id
     WHERE mr.id = ANY($1::int[])`,
    [forks.map((mr) => mr.id)],
  )) as Array<{ id: number; allowed: boolean }>;
  return new Map(rows.map((row) => [Number(row.id), row.allowed]));
}
