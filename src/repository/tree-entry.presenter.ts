import type { components } from '../../generated/openapi.js';
import type { TreeEntry } from './repository.service.js';

export type TreeEntryJson = components['schemas']['TreeEntry'];

export const presentTreeEntry = (entry: TreeEntry): TreeEntryJson => ({
  id: entry.id,
  name: entry.name,
  type: entry.type,
  path: entry.path,
  mode: entry.mode,
});
