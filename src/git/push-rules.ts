/**
 * Which ref updates a caller may make, whether they arrive by `git push` or through the API:
 * protected branches (push, merge, force push, deletion, wildcards) and protected tags. One place
 * answers for both paths, so the rules cannot drift apart.
 */
import type { DataSource } from 'typeorm';
import type { Caller } from '../core/auth.js';
import { AccessLevel } from '../members/member.entity.js';
import {
  ProtectedBranch,
  type ProtectedBranchAction,
} from '../protected_branches/protected-branch.entity.js';
import { ProtectedTag } from '../protected_tags/protected-tag.entity.js';

export const ZERO_SHA = '0000000000000000000000000000000000000000';

/** Access level 60 in an access-level list: administrators only. */
export const ADMIN_ACCESS = 60;

export interface RefChange {
  ref: string;
  oldSha: string;
  newSha: string;
  /** The new commit does not descend from the old one. */
  forced?: boolean;
}

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
  /** Groups the caller belongs to, directly or through an ancestor. */
  groupIds: Set<number>;
}

const escapeRegex = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

/** GitLab's wildcards: `*` matches any run of characters, `/` included. */
export function refPatternMatches(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  return new RegExp(`^${pattern.split('*').map(escapeRegex).join('.*')}$`).test(name);
}

/** Does one entry of an access-level list let the actor in? */
export function entryAllows(entry: AccessEntry, actor: PushActor): boolean {
  const user = actor.caller.user;
  if (!user) return false;
  if (entry.userId !== null) return entry.userId === user.id;
  if (entry.groupId !== null) return actor.groupIds.has(entry.groupId);
  if (entry.deployKeyId !== null) return false;
  if (entry.accessLevel === AccessLevel.NoAccess) return false;
  if (user.admin) return true;
  if (entry.accessLevel === ADMIN_ACCESS) return false;
  return actor.accessLevel >= (entry.accessLevel ?? Number.POSITIVE_INFINITY);
}

const allows = (rule: ProtectedBranch, action: ProtectedBranchAction, actor: PushActor) =>
  (rule.accessLevels ?? []).some((entry) => entry.action === action && entryAllows(entry, actor));

export const MESSAGES = {
  push: 'You are not allowed to push code to protected branches on this project.',
  force: 'You are not allowed to force push code to a protected branch on this project.',
  deleteBranch: 'You can only delete protected branches using the web interface.',
  createBranch: 'You are not allowed to create protected branches on this project.',
  createTag: 'You are not allowed to create this tag as it is protected.',
  updateTag: 'You are not allowed to change existing tags on this project.',
  updateProtectedTag: 'Protected tags cannot be updated.',
  deleteProtectedTag:
    'You are not allowed to delete protected tags from this project. Only a project maintainer or owner can delete a protected tag.',
} as const;

export class PushRules {
  constructor(private readonly dataSource: DataSource) {}

  async actor(caller: Caller, accessLevel: number): Promise<PushActor> {
    const groupIds = new Set<number>();
    if (caller.user) {
      const rows: Array<{ id: number }> = await this.dataSource.query(
        `SELECT DISTINCT d.id FROM members m
         JOIN namespaces d ON d.traversal_ids @> ARRAY[m.source_id]
         WHERE m.user_id = $1 AND m.source_type = 'Namespace'
           AND (m.expires_at IS NULL OR m.expires_at > current_date)`,
        [caller.user.id],
      );
      for (const row of rows) groupIds.add(Number(row.id));
    }
    return { caller, accessLevel, groupIds };
  }

  /** The project's protected branches that match `branch`, with their access levels. */
  async matchingBranches(projectId: number, branch: string): Promise<ProtectedBranch[]> {
    const rules = await this.dataSource.getRepository(ProtectedBranch).find({
      where: { projectId },
      relations: { accessLevels: true },
    });
    return rules.filter((rule) => refPatternMatches(rule.name, branch));
  }

  async matchingTags(projectId: number, tag: string): Promise<ProtectedTag[]> {
    const rules = await this.dataSource.getRepository(ProtectedTag).find({
      where: { projectId },
      relations: { createAccessLevels: true },
    });
    return rules.filter((rule) => refPatternMatches(rule.name, tag));
  }

  /** Why the change is refused, or null when it is allowed. `deletion` says who deletes branches. */
  async refusal(
    projectId: number,
    actor: PushActor,
    change: RefChange,
    options: { branchDeletionThroughApi?: boolean } = {},
  ): Promise<string | null> {
    const creating = change.oldSha === ZERO_SHA;
    const deleting = change.newSha === ZERO_SHA;
    if (change.ref.startsWith('refs/heads/')) {
      const rules = await this.matchingBranches(projectId, change.ref.slice('refs/heads/'.length));
      if (rules.length === 0) return null;
      if (deleting) {
        // Through the API, Maintainers may delete a protected branch; a push never may.
        if (
          options.branchDeletionThroughApi &&
          (actor.caller.user?.admin || actor.accessLevel >= AccessLevel.Maintainer)
        )
          return null;
        return MESSAGES.deleteBranch;
      }
      if (creating) {
        const ok = rules.every((rule) => allows(rule, 'push', actor) || allows(rule, 'merge', actor));
        return ok ? null : MESSAGES.createBranch;
      }
      if (!rules.every((rule) => allows(rule, 'push', actor))) return MESSAGES.push;
      if (change.forced && !rules.every((rule) => rule.allowForcePush)) return MESSAGES.force;
      return null;
    }
    if (change.ref.startsWith('refs/tags/')) {
      const rules = await this.matchingTags(projectId, change.ref.slice('refs/tags/'.length));
      const maintainer = actor.caller.user?.admin || actor.accessLevel >= AccessLevel.Maintainer;
      if (rules.length === 0) return creating || deleting || maintainer ? null : MESSAGES.updateTag;
      if (deleting) return maintainer ? null : MESSAGES.deleteProtectedTag;
      if (!creating) return MESSAGES.updateProtectedTag;
      const ok = rules.every((rule) =>
        (rule.createAccessLevels ?? []).some((entry) => entryAllows(entry, actor)),
      );
      return ok ? null : MESSAGES.createTag;
    }
    return null;
  }

  /** The first refusal among several changes: one refused ref refuses the whole push. */
  async firstRefusal(projectId: number, actor: PushActor, changes: RefChange[]): Promise<string | null> {
    for (const change of changes) {
      const reason = await this.refusal(projectId, actor, change);
      if (reason) return reason;
    }
    return null;
  }
}
