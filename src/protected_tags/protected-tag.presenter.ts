import type { components } from '../../generated/openapi.js';
import type { ProtectedTag, ProtectedTagCreateAccessLevel } from './protected-tag.entity.js';
import type { EntryNames } from './protected-tags.service.js';

export type ProtectedTagJson = components['schemas']['ProtectedTag'];
type AccessLevelJson = components['schemas']['ProtectedTagAccessLevel'];

const ROLE_DESCRIPTIONS: Record<number, string> = {
  0: 'No one',
  30: 'Developers + Maintainers',
  40: 'Maintainers',
  60: 'Administrators',
};

function describe(entry: ProtectedTagCreateAccessLevel, names: EntryNames): string {
  if (entry.userId !== null) return names.users.get(entry.userId) ?? 'User';
  if (entry.groupId !== null) return names.groups.get(entry.groupId) ?? 'Group';
  if (entry.deployKeyId !== null) return 'Deploy key';
  return ROLE_DESCRIPTIONS[entry.accessLevel ?? -1] ?? String(entry.accessLevel);
}

function presentEntry(entry: ProtectedTagCreateAccessLevel, names: EntryNames): AccessLevelJson {
  return {
    id: entry.id,
    access_level: entry.accessLevel as AccessLevelJson['access_level'],
    access_level_description: describe(entry, names),
    user_id: entry.userId,
    group_id: entry.groupId,
    deploy_key_id: entry.deployKeyId,
  };
}

/** A protected tag with who may create the tags it matches, oldest entry first. */
export function presentProtectedTag(rule: ProtectedTag, names: EntryNames): ProtectedTagJson {
  return {
    name: rule.name,
    create_access_levels: (rule.createAccessLevels ?? [])
      .slice()
      .sort((a, b) => a.id - b.id)
      .map((entry) => presentEntry(entry, names)),
  };
}
