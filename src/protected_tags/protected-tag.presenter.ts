import type { components } from '../../generated/openapi.js';
import type { ProtectedTag, ProtectedTagCreateAccessLevel } from './protected-tag.entity.js';
import { describeEntry, type EntryNames } from '../protected_branches/access-entries.js';

export type ProtectedTagJson = components['schemas']['ProtectedTag'];
type AccessLevelJson = components['schemas']['ProtectedTagAccessLevel'];

function presentEntry(entry: ProtectedTagCreateAccessLevel, names: EntryNames): AccessLevelJson {
  return {
    id: entry.id,
    access_level: entry.accessLevel as AccessLevelJson['access_level'],
    access_level_description: describeEntry(entry, names),
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
