/**
 * Which ref updates a caller may make, whether they arrive by `git push` or through the API:
 * protected branches (push, merge, force push, deletion, wildcards) and protected tags. One place
 * answers for both paths (it is the first of the pre-receive checks), so the rules cannot drift apart.
 */
import type { DataSource } from 'typeorm';
import {
  activeSql,
  canPushAsCollaborator,
  groupEntryAdmits,
  meetsAccessLevel,
  projectAccessLevels,
} from '../core/abilities.js';
import { canAdminProtectedRefs } from '../protected_branches/abilities.js';
import { canPushCode } from '../repository/abilities.js';
import type { Caller } from '../core/auth.js';
import { AccessLevel } from '../core/access-level.js';
import type { PreReceiveCheck, ReceivedPush } from '../git/pre-receive.js';
import { refPatternMatches, ZERO_SHA, type RefChange } from '../git/ref-changes.js';
import { ProtectedTag } from '../protected_tags/protected-tag.entity.js';
import { ProtectedBranch, type ProtectedBranchAction } from './protected-branch.entity.js';

/** Access level 60 in an access-level list: administrators only. */
export const ADMIN_ACCESS = 60;

export interface AccessEntry {
  accessLevel: number | null;
  userId: number | null;
  groupId: number | null;
  deployKeyId: number | null;
}

/** What the rules need to know about the caller in one project. */
export interface PushActor {
  caller: Caller;
  /** The caller's access level in the project. */
  accessLevel: number;
  /** The caller's access level in each group they belong to, directly or through an ancestor. */
  groupLevels: Map<number, number>;
  /**
   * Set for one who may not push code to the project but collaborates on merge requests from it: the
   * only branches they may update (`ProtectedRefs.collaborationBranches`).
   */
  collaborationBranches?: Set<string>;
}

/** The project a change is made in, as far as the rules care. */
export interface RuleProject {
  id: number;
  defaultBranch: string | null;
}

/** Does one entry of an access-level list let the actor in? */
export function entryAllows(entry: AccessEntry, actor: PushActor): boolean {
  const user = actor.caller.user;
  if (!user) return false;
  if (entry.userId !== null) return entry.userId === user.id;
  // A group entry admits the group's Developers and above.
  if (entry.groupId !== null) return groupEntryAdmits(actor.groupLevels.get(entry.groupId) ?? 0);
  if (entry.deployKeyId !== null) return false;
  if (entry.accessLevel === AccessLevel.NoAccess) return false;
  if (user.admin) return true;
  if (entry.accessLevel === ADMIN_ACCESS) return false;
  return entry.accessLevel !== null && meetsAccessLevel(actor.accessLevel, entry.accessLevel);
}

const allows = (rule: ProtectedBranch, action: ProtectedBranchAction, actor: PushActor) =>
  (rule.accessLevels ?? []).some((entry) => entry.action === action && entryAllows(entry, actor));

export const MESSAGES = {
  pushCode: 'You are not allowed to push code to this project.',
  push: 'You are not allowed to push code to protected branches on this project.',
  force: 'You are not allowed to force push code to a protected branch on this project.',
  deleteDefaultBranch: 'The default branch of a project cannot be deleted.',
  deleteBranchByPush: 'You can only delete protected branches using the web interface.',
  deleteBranchRole:
    'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.',
  createBranch: 'You are not allowed to create protected branches on this project.',
  hexBranchName: 'You cannot create a branch with a 40-character hexadecimal branch name.',
  createTag: 'You are not allowed to create this tag as it is protected.',
  updateProtectedTag: 'Protected tags cannot be updated.',
  deleteTagByPush: 'You can only delete protected tags using the web interface.',
  deleteTagRole:
    'You are not allowed to delete protected tags from this project. Only a project maintainer or owner can delete a protected tag.',
  defaultBranchTagName: 'You cannot use default branch name to create a tag',
  hexTagName: 'You cannot create a tag with a SHA-1 or SHA-256 tag name.',
  prohibitedTagName: 'You cannot create a tag with a prohibited pattern.',
} as const;

export interface ProjectRules {
  branches: ProtectedBranch[];
  tags: ProtectedTag[];
}

/** Options of a check: API writes (`throughApi`) may delete protected refs, pushes never. */
export type RefusalOptions = Pick<ReceivedPush, 'throughApi' | 'merging'>;

export class ProtectedRefs {
  constructor(private readonly dataSource: DataSource) {}

  async actor(caller: Caller, accessLevel: number): Promise<PushActor> {
    const groupLevels = new Map<number, number>();
    if (caller.user) {
      const rows: Array<{ id: number; level: number }> = await this.dataSource.query(
        `SELECT d.id, max(m.access_level) AS level FROM members m
         JOIN namespaces d ON d.traversal_ids @> ARRAY[m.source_id]
         WHERE m.user_id = $1 AND m.source_type = 'Namespace'
           AND ${activeSql('m')}
         GROUP BY d.id`,
        [caller.user.id],
      );
      for (const row of rows) groupLevels.set(Number(row.id), Number(row.level));
    }
    return { caller, accessLevel, groupLevels };
  }

  /** May the actor merge into `branch`: its protections' merge entries, or Developer and above when unprotected. */
  async mayMerge(projectId: number, actor: PushActor, branch: string): Promise<boolean> {
    const { branches } = await this.projectRules(projectId);
    const rules = branches.filter((rule) => refPatternMatches(rule.name, branch));
    if (rules.length === 0) return canPushCode(actor.caller, actor.accessLevel);
    return rules.some((rule) => allows(rule, 'merge', actor));
  }

  /** May the actor push to `branch`: Developer and above, and its protections' push entries when protected. */
  async mayPush(projectId: number, actor: PushActor, branch: string): Promise<boolean> {
    if (!canPushCode(actor.caller, actor.accessLevel)) return false;
    const { branches } = await this.projectRules(projectId);
    const rules = branches.filter((rule) => refPatternMatches(rule.name, branch));
    return rules.length === 0 || rules.some((rule) => allows(rule, 'push', actor));
  }

  /**
   * The branches of `projectId` (a fork) the caller may push to as a collaborator on open merge requests
   * from them into other projects (`canPushAsCollaborator`); only `branch` when given.
   */
  async collaborationBranches(projectId: number, caller: Caller, branch?: string): Promise<Set<string>> {
    const found = new Set<string>();
    if (!caller.user) return found;
    const rows = (await this.dataSource.query(
      `SELECT mr.source_branch, mr.target_project_id, mr.target_branch,
         s.visibility_level AS source_visibility, t.visibility_level AS target_visibility
       FROM merge_requests mr
       JOIN projects s ON s.id = mr.source_project_id
       JOIN projects t ON t.id = mr.target_project_id
       WHERE mr.source_project_id = $1 AND mr.target_project_id <> $1 AND mr.state = 'opened'
         AND mr.allow_collaboration AND ($2::text IS NULL OR mr.source_branch = $2)`,
      [projectId, branch ?? null],
    )) as Array<{
      source_branch: string;
      target_project_id: number;
      target_branch: string;
      source_visibility: number;
      target_visibility: number;
    }>;
    if (rows.length === 0) return found;
    const [{ branches: sourceRules }, levels, { groupLevels }] = await Promise.all([
      this.projectRules(projectId),
      projectAccessLevels(
        this.dataSource.manager,
        caller,
        rows.map((row) => row.target_project_id),
      ),
      this.actor(caller, 0),
    ]);
    for (const row of rows) {
      if (found.has(row.source_branch)) continue;
      const actor = { caller, accessLevel: levels.get(row.target_project_id)?.level ?? 0, groupLevels };
      const allowed = canPushAsCollaborator(caller, {
        open: true,
        allowCollaboration: true,
        sourceVisibility: Number(row.source_visibility),
        targetVisibility: Number(row.target_visibility),
        sourceBranchProtected: sourceRules.some((rule) => refPatternMatches(rule.name, row.source_branch)),
        mayMergeTarget: await this.mayMerge(row.target_project_id, actor, row.target_branch),
      });
      if (allowed) found.add(row.source_branch);
    }
    return found;
  }

  /** Whether a rule protects `branch` in the project. */
  async isProtectedBranch(projectId: number, branch: string): Promise<boolean> {
    const { branches } = await this.projectRules(projectId);
    return branches.some((rule) => refPatternMatches(rule.name, branch));
  }

  /** A project's protected branch and tag rules with their entries, loaded once for a whole push. */
  async projectRules(projectId: number): Promise<ProjectRules> {
    const [branches, tags] = await Promise.all([
      this.dataSource
        .getRepository(ProtectedBranch)
        .find({ where: { projectId }, relations: { accessLevels: true } }),
      this.dataSource
        .getRepository(ProtectedTag)
        .find({ where: { projectId }, relations: { createAccessLevels: true } }),
    ]);
    return { branches, tags };
  }

  /**
   * Why the change is refused, or null when it is allowed: GitLab's branch and tag checks. Where several
   * rules match a ref, any entry of any of them may grant pushing, merging or creating; force pushes
   * need every matching rule to allow them.
   */
  async refusal(
    project: RuleProject,
    actor: PushActor,
    change: RefChange,
    options: RefusalOptions = {},
    loaded?: ProjectRules,
  ): Promise<string | null> {
    const { branches, tags } = loaded ?? (await this.projectRules(project.id));
    const creating = change.oldSha === ZERO_SHA;
    const deleting = change.newSha === ZERO_SHA;
    const maintainer = canAdminProtectedRefs(actor.caller, actor.accessLevel);
    // A collaborator updates the source branches they were let into, nothing else.
    if (actor.collaborationBranches) {
      const heads = change.ref.startsWith('refs/heads/');
      if (!heads || creating || deleting || !actor.collaborationBranches.has(change.ref.slice(11)))
        return MESSAGES.pushCode;
    }
    if (change.ref.startsWith('refs/heads/')) {
      const branch = change.ref.slice('refs/heads/'.length);
      if (deleting && branch === project.defaultBranch) return MESSAGES.deleteDefaultBranch;
      if (creating && /^[0-9a-f]{40}$/.test(branch)) return MESSAGES.hexBranchName;
      const rules = branches.filter((rule) => refPatternMatches(rule.name, branch));
      if (rules.length === 0) return null;
      const anyAllows = (action: ProtectedBranchAction) => rules.some((rule) => allows(rule, action, actor));
      if (deleting) {
        if (!maintainer) return MESSAGES.deleteBranchRole;
        return options.throughApi ? null : MESSAGES.deleteBranchByPush;
      }
      if (creating) return anyAllows('push') || anyAllows('merge') ? null : MESSAGES.createBranch;
      if (!anyAllows(options.merging ? 'merge' : 'push')) return MESSAGES.push;
      if (change.forced && !rules.every((rule) => rule.allowForcePush)) return MESSAGES.force;
      return null;
    }
    if (change.ref.startsWith('refs/tags/')) {
      const tag = change.ref.slice('refs/tags/'.length);
      if (creating) {
        if (tag === project.defaultBranch) return MESSAGES.defaultBranchTagName;
        if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})/.test(tag)) return MESSAGES.hexTagName;
        if (tag.startsWith('refs/')) return MESSAGES.prohibitedTagName;
      }
      const rules = tags.filter((rule) => refPatternMatches(rule.name, tag));
      if (rules.length === 0) return null;
      if (deleting) {
        if (!maintainer) return MESSAGES.deleteTagRole;
        return options.throughApi ? null : MESSAGES.deleteTagByPush;
      }
      if (!creating) return MESSAGES.updateProtectedTag;
      const ok = rules.some((rule) =>
        (rule.createAccessLevels ?? []).some((entry) => entryAllows(entry, actor)),
      );
      return ok ? null : MESSAGES.createTag;
    }
    return null;
  }

  /** The first refusal among several changes: one refused ref refuses the whole push. */
  async firstRefusal(
    project: RuleProject,
    actor: PushActor,
    changes: RefChange[],
    options: RefusalOptions = {},
  ): Promise<string | null> {
    const loaded = await this.projectRules(project.id);
    for (const change of changes) {
      const reason = await this.refusal(project, actor, change, options, loaded);
      if (reason) return reason;
    }
    return null;
  }

  /** The protections as the first pre-receive check. */
  preReceiveCheck(): PreReceiveCheck {
    return {
      stage: 'refs',
      refusal: async (push, changes) => {
        const actor = await this.actor(push.caller, push.accessLevel);
        actor.collaborationBranches = push.collaborationBranches;
        return this.firstRefusal(push.project, actor, changes, push);
      },
    };
  }
}
