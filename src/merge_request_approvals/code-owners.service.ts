import type { DataSource } from 'typeorm';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import type { PreReceiveCheck } from '../git/pre-receive.js';
import { refPatternMatches, ZERO_SHA, type RefChange } from '../git/ref-changes.js';
import type { RuleProject } from '../protected_branches/protected-refs.js';
import type { GitRepository } from '../git/repository.js';
import {
  CODEOWNERS_PATHS,
  DEFAULT_SECTION,
  entriesFor,
  parseCodeOwners,
  splitOwners,
  type CodeOwnersFile,
} from './codeowners.js';

export const CODE_OWNERS_PUSH_REFUSED =
  'Push to protected branches that contain changes to files matching CODEOWNERS is not allowed';

interface MergeRequestRow {
  id: number;
  target_project_id: number;
  target_branch: string;
  state: string;
}

/** A code owner rule a merge request should have: one per CODEOWNERS entry matching a changed file. */
export interface CodeOwnerRule {
  section: string;
  pattern: string;
  approvalsRequired: number;
  userIds: number[];
  groupIds: number[];
}

/**
 * CODEOWNERS read from a target branch (the first of GitLab's three locations, in one batch read), and the
 * code owner rules it gives each merge request for the files it changes.
 */
export class CodeOwnersService {
  private readonly dataSource: DataSource;
  private readonly enabled: boolean;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'repositories' | 'mergeRequestVersions'>,
  ) {
    this.dataSource = deps.dataSource;
    this.enabled = deps.config.tier !== 'free';
  }

  /** The code owner check of pushes and API writes, merges aside (those ask approvals instead). */
  preReceiveCheck(): PreReceiveCheck {
    return {
      stage: 'paths',
      refusal: async (push, changes) => {
        const pathsOf = push.pathsOf;
        if (!this.enabled || push.merging || !pathsOf) return null;
        for (const change of changes) {
          const reason = await this.pushRefusal(push.project, change, () => pathsOf(change));
          if (reason) return reason;
        }
        return null;
      },
    };
  }

  /**
   * GitLab's code owner check on protected branches that require code owner approval: a direct push (not
   * a merge) that changes a file CODEOWNERS names an owner for (in a section that is not optional) is refused.
   */
  async pushRefusal(
    project: RuleProject,
    change: RefChange,
    paths: () => Promise<string[]>,
  ): Promise<string | null> {
    if (!change.ref.startsWith('refs/heads/') || change.oldSha === ZERO_SHA || change.newSha === ZERO_SHA)
      return null;
    if (!(await this.requiredOn(project.id, change.ref.slice('refs/heads/'.length)))) return null;
    const git = await this.gitOf(project.id);
    const file = git ? await this.read(git, change.oldSha) : null;
    if (!file) return null;
    const owned = (await paths()).some((path) =>
      entriesFor(file, path).some((entry) => !entry.optional && entry.owners.length > 0),
    );
    return owned ? CODE_OWNERS_PUSH_REFUSED : null;
  }

  private async gitOf(projectId: number): Promise<GitRepository | null> {
    const [row] = (await this.dataSource.query(`SELECT id, repository_storage FROM projects WHERE id = $1`, [
      projectId,
    ])) as Array<{ id: number; repository_storage: string }>;
    return row
      ? this.services.repositories.gitOf({ id: row.id, repositoryStorage: row.repository_storage })
      : null;
  }

  /** The CODEOWNERS file at `revision`, or null when none of the three locations has one. */
  async read(git: GitRepository, revision: string): Promise<CodeOwnersFile | null> {
    const objects = await git.objects(CODEOWNERS_PATHS.map((path) => `${revision}:${path}`));
    const found = objects.find((object) => object?.type === 'blob');
    if (!found) return null;
    return parseCodeOwners((await git.readBlob(found.id)).toString('utf8'));
  }

  /** Paths a range of commits changed (both sides of a rename). */
  async changedPaths(projectId: number, before: string, after: string): Promise<string[]> {
    const git = await this.gitOf(projectId);
    if (!git) return [];
    return pathsOf(git, before, after);
  }

  /** The code owner rules for the changed paths, owners resolved to users and groups. */
  async rulesFor(file: CodeOwnersFile, paths: string[], required: boolean): Promise<CodeOwnerRule[]> {
    const byKey = new Map<
      string,
      { section: string; pattern: string; owners: string[]; approvals: number }
    >();
    for (const path of paths)
      for (const entry of entriesFor(file, path)) {
        const key = `${entry.section.toLowerCase()}\0${entry.pattern}`;
        if (byKey.has(key)) continue;
        const approvals = required && !entry.optional ? entry.approvalsRequired : 0;
        byKey.set(key, { section: entry.section, pattern: entry.pattern, owners: entry.owners, approvals });
      }
    const { names, emails } = splitOwners([...byKey.values()].flatMap((rule) => rule.owners));
    const lowerNames = [...new Set(names.map((name) => name.toLowerCase()))];
    const users = lowerNames.length
      ? ((await this.dataSource.query(
          `SELECT id, lower(username) AS name FROM users WHERE lower(username) = ANY($1::text[])`,
          [lowerNames],
        )) as Array<{ id: number; name: string }>)
      : [];
    const groups = lowerNames.length
      ? ((await this.dataSource.query(
          `SELECT id, lower(full_path) AS name FROM namespaces WHERE kind = 'group' AND lower(full_path) = ANY($1::text[])`,
          [lowerNames],
        )) as Array<{ id: number; name: string }>)
      : [];
    const byEmail = emails.length
      ? ((await this.dataSource.query(
          `SELECT id, lower(email) AS name FROM users WHERE lower(email) = ANY($1::text[])`,
          [[...new Set(emails)]],
        )) as Array<{ id: number; name: string }>)
      : [];
    const userByName = new Map(users.map((row) => [row.name, row.id]));
    const groupByPath = new Map(groups.map((row) => [row.name, row.id]));
    const userByEmail = new Map(byEmail.map((row) => [row.name, row.id]));
    return [...byKey.values()].map((rule) => {
      const userIds = new Set<number>();
      const groupIds = new Set<number>();
      for (const owner of rule.owners) {
        const key = owner.replace(/^@/, '').toLowerCase();
        if (!owner.startsWith('@')) {
          const id = userByEmail.get(key);
          if (id !== undefined) userIds.add(id);
        } else if (userByName.has(key)) userIds.add(userByName.get(key)!);
        else if (groupByPath.has(key)) groupIds.add(groupByPath.get(key)!);
      }
      return {
        section: rule.section,
        pattern: rule.pattern,
        approvalsRequired: rule.approvals,
        userIds: [...userIds].sort((a, b) => a - b),
        groupIds: [...groupIds].sort((a, b) => a - b),
      };
    });
  }

  /** Whether a protected branch matching `branch` requires code owner approval. */
  async requiredOn(projectId: number, branch: string): Promise<boolean> {
    const rows = (await this.dataSource.query(
      `SELECT name FROM protected_branches WHERE project_id = $1 AND code_owner_approval_required`,
      [projectId],
    )) as Array<{ name: string }>;
    return rows.some((row) => refPatternMatches(row.name, branch));
  }

  /**
   * Replaces the merge request's code owner rules with those of its latest version: CODEOWNERS of the
   * target branch, matched against the files the merge request changes. Safe to repeat.
   */
  async sync(mergeRequestId: number): Promise<void> {
    if (!this.enabled) return;
    const [mr] = (await this.dataSource.query(
      `SELECT id, target_project_id, target_branch, state FROM merge_requests WHERE id = $1`,
      [mergeRequestId],
    )) as MergeRequestRow[];
    if (!mr || mr.state !== 'opened') return;
    const git = await this.gitOf(mr.target_project_id);
    if (!git) return;
    const diff = (await this.services.mergeRequestVersions.latest(this.dataSource.manager, [mr.id])).get(
      mr.id,
    );
    const file = await this.read(git, `refs/heads/${mr.target_branch}`);
    let rules: CodeOwnerRule[] = [];
    if (file && diff) {
      const paths = await pathsOf(git, diff.baseCommitSha ?? diff.startCommitSha, diff.headCommitSha);
      rules = await this.rulesFor(file, paths, await this.requiredOn(mr.target_project_id, mr.target_branch));
    }
    await this.dataSource.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM merge_requests WHERE id = $1 FOR UPDATE`, [mr.id]);
      await tx.query(`DELETE FROM approval_rules WHERE merge_request_id = $1 AND rule_type = 'code_owner'`, [
        mr.id,
      ]);
      for (const rule of rules)
        await tx.query(
          `INSERT INTO approval_rules (project_id, merge_request_id, name, rule_type, section, approvals_required,
             user_ids, group_ids)
           VALUES ($1, $2, $3, 'code_owner', $4, $5, $6::int[], $7::int[])`,
          [
            mr.target_project_id,
            mr.id,
            rule.pattern,
            rule.section === DEFAULT_SECTION ? DEFAULT_SECTION : rule.section,
            rule.approvalsRequired,
            rule.userIds,
            rule.groupIds,
          ],
        );
    });
  }
}

async function pathsOf(git: GitRepository, before: string, after: string): Promise<string[]> {
  const result = await git.diffs(before, after);
  return [...new Set(result.diffs.flatMap((diff) => [diff.oldPath, diff.newPath]))];
}
