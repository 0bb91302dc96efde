/**
 * The entries of protected branch and protected tag lists (a role, a user, a group or a deploy key):
 * reading them from parameters, validating them as GitLab does, and describing them. Both families
 * use this one module.
 */
import { activeSql } from '../core/abilities.js';
import type { EntityManager } from 'typeorm';
import { AccessLevel } from '../core/access-level.js';
import type { AccessEntry } from './protected-refs.js';

/** What a request names in an entry; the first of user, group, deploy key and role wins, as in GitLab. */
export interface EntryInput {
  access_level?: number;
  user_id?: number;
  group_id?: number;
  deploy_key_id?: number;
}

export function entryTarget(input: EntryInput): AccessEntry {
  const none: AccessEntry = { accessLevel: null, userId: null, groupId: null, deployKeyId: null };
  if (input.user_id !== undefined) return { ...none, userId: input.user_id };
  if (input.group_id !== undefined) return { ...none, groupId: input.group_id };
  if (input.deploy_key_id !== undefined) return { ...none, deployKeyId: input.deploy_key_id };
  return { ...none, accessLevel: input.access_level ?? null };
}

/** Names of the users and groups that entries refer to, for their descriptions. */
export interface EntryNames {
  users: Map<number, string>;
  groups: Map<number, string>;
}

const idsOf = (entries: AccessEntry[], key: 'userId' | 'groupId') => [
  ...new Set(entries.flatMap((entry) => (entry[key] === null ? [] : [entry[key]]))),
];

/** The names of every user and group the entries name: one query each. */
export async function loadEntryNames(manager: EntityManager, entries: AccessEntry[]): Promise<EntryNames> {
  const names: EntryNames = { users: new Map(), groups: new Map() };
  const named = (sql: string, ids: number[]): Promise<Array<{ id: number; name: string }>> =>
    ids.length > 0 ? manager.query(sql, [ids]) : Promise.resolve([]);
  const [users, groups] = await Promise.all([
    named('SELECT id, name FROM users WHERE id = ANY($1::int[])', idsOf(entries, 'userId')),
    named('SELECT id, name FROM namespaces WHERE id = ANY($1::int[])', idsOf(entries, 'groupId')),
  ]);
  for (const user of users) names.users.set(Number(user.id), user.name);
  for (const group of groups) names.groups.set(Number(group.id), group.name);
  return names;
}

const ROLE_DESCRIPTIONS: Record<number, string> = {
  0: 'No one',
  30: 'Developers + Maintainers',
  40: 'Maintainers',
  60: 'Administrators',
};

/** GitLab's `access_level_description`: the user's or group's name, or the role in words. */
export function describeEntry(entry: AccessEntry, names: EntryNames): string {
  if (entry.userId !== null) return names.users.get(entry.userId) ?? 'User';
  if (entry.groupId !== null) return names.groups.get(entry.groupId) ?? 'Group';
  if (entry.deployKeyId !== null) return 'Deploy key';
  return ROLE_DESCRIPTIONS[entry.accessLevel ?? -1] ?? String(entry.accessLevel);
}

/** What validation needs to know about the users and groups named: who exists, who may be named. */
interface EntryLookups {
  users: Set<number>;
  members: Set<number>;
  groups: Set<number>;
  sharedGroups: Set<number>;
}

async function lookUp(
  manager: EntityManager,
  project: { id: number; namespace: { traversalIds: number[] } },
  entries: AccessEntry[],
): Promise<EntryLookups> {
  const userIds = idsOf(entries, 'userId');
  const groupIds = idsOf(entries, 'groupId');
  const ids = (rows: Array<{ id: number }>) => new Set(rows.map((row) => Number(row.id)));
  const query = (run: boolean, sql: string, params: unknown[]): Promise<Array<{ id: number }>> =>
    run ? manager.query(sql, params) : Promise.resolve([]);
  const [users, members, groups, sharedGroups] = await Promise.all([
    query(userIds.length > 0, 'SELECT id FROM users WHERE id = ANY($1::int[])', [userIds]),
    query(
      userIds.length > 0,
      `SELECT DISTINCT m.user_id AS id FROM members m
       WHERE m.user_id = ANY($1::int[]) AND ${activeSql('m')}
         AND ((m.source_type = 'Project' AND m.source_id = $2)
           OR (m.source_type = 'Namespace' AND m.source_id = ANY($3::int[]))
           OR (m.source_type = 'Namespace' AND EXISTS (
             SELECT 1 FROM project_group_links l JOIN namespaces g ON g.id = l.group_id
             WHERE l.project_id = $2 AND ${activeSql('l')}
               AND m.source_id = ANY(g.traversal_ids))))`,
      [userIds, project.id, project.namespace.traversalIds],
    ),
    query(groupIds.length > 0, `SELECT id FROM namespaces WHERE kind = 'group' AND id = ANY($1::int[])`, [
      groupIds,
    ]),
    query(
      groupIds.length > 0,
      `SELECT group_id AS id FROM project_group_links
       WHERE project_id = $1 AND group_id = ANY($2::int[]) AND group_access >= $3
         AND ${activeSql('project_group_links')}`,
      [project.id, groupIds, AccessLevel.Developer],
    ),
  ]);
  return { users: ids(users), members: ids(members), groups: ids(groups), sharedGroups: ids(sharedGroups) };
}

/** One entry of a list as validation sees it; entries kept unchanged skip the existence checks. */
export interface PlannedEntry {
  target: AccessEntry;
  checked: boolean;
}

/**
 * GitLab's record validation of entry lists, as full messages (`<label> user is not a member of the
 * project`): users must exist and be members of the project, groups must exist and have it shared with
 * them at Developer or higher, deploy keys must exist (forge-api has none yet), and no role, user or
 * group may appear twice in one list.
 */
export async function entryErrors(
  manager: EntityManager,
  project: { id: number; namespace: { traversalIds: number[] } },
  lists: Array<{ label: string; entries: PlannedEntry[] }>,
): Promise<string[]> {
  const found = await lookUp(
    manager,
    project,
    lists.flatMap((list) => list.entries.filter((entry) => entry.checked).map((entry) => entry.target)),
  );
  const messages: string[] = [];
  for (const { label, entries } of lists) {
    const add = (text: string) => {
      const message = `${label} ${text}`;
      if (!messages.includes(message)) messages.push(message);
    };
    const seen = { accessLevel: new Set<number>(), userId: new Set<number>(), groupId: new Set<number>() };
    for (const { target, checked } of entries) {
      if (target.userId !== null) {
        if (seen.userId.has(target.userId)) add('user has already been taken');
        seen.userId.add(target.userId);
        if (!checked) continue;
        if (!found.users.has(target.userId)) add("user can't be blank");
        else if (!found.members.has(target.userId)) add('user is not a member of the project');
      } else if (target.groupId !== null) {
        if (seen.groupId.has(target.groupId)) add('group has already been taken');
        seen.groupId.add(target.groupId);
        if (!checked) continue;
        if (!found.groups.has(target.groupId)) add("group can't be blank");
        else if (!found.sharedGroups.has(target.groupId)) add('group does not have access to the project');
      } else if (target.deployKeyId !== null) {
        // forge-api has no deploy keys yet, so none can be found.
        add("deploy key can't be blank");
      } else if (target.accessLevel === null) {
        add("access level can't be blank");
      } else {
        if (seen.accessLevel.has(target.accessLevel)) add('access level has already been taken');
        seen.accessLevel.add(target.accessLevel);
      }
    }
  }
  return messages;
}
