/**
 * Tree listings as the API pages them, kept by tree id: an id fixes a tree's content for good, so a
 * listing never goes stale (a moved ref names another tree) and a page is cut from the kept listing
 * instead of reading the whole tree again. Memory is bounded by an estimate of the listings' bytes.
 */
import { WeightedLruCache } from '../core/lru.js';
import { mapTreeObject } from './tree-object.js';

export interface TreeEntry {
  id: string;
  name: string;
  type: 'tree' | 'blob' | 'commit';
  path: string;
  mode: string;
}

/** Reads a tree object's bytes by id. */
export type ReadTree = (id: string) => Promise<Buffer>;

/** ls-tree's spelling of the modes git stores, and the type of each. */
const KINDS: Record<string, { mode: string; type: TreeEntry['type'] }> = {
  '40000': { mode: '040000', type: 'tree' },
  '160000': { mode: '160000', type: 'commit' },
};
const kindOf = (mode: string) => KINDS[mode] ?? { mode: mode.padStart(6, '0'), type: 'blob' as const };

/** A tree's entries as clients see them, with paths below `prefix`. */
function entriesOf(data: Buffer, idBytes: number, prefix: string): TreeEntry[] {
  return mapTreeObject(data, idBytes, 'utf8', (stored, name, id) => {
    const { mode, type } = kindOf(stored);
    return { id, name, type, path: prefix ? `${prefix}/${name}` : name, mode };
  });
}

/** A tree's entries as clients see them: ls-tree's spelling of modes, and a type for each. */
export const parseTree = (data: Buffer, idBytes: number) => entriesOf(data, idBytes, '');

/** Strings count twice (UTF-16); an object and its slots about 120 bytes. */
const entryBytes = (entry: TreeEntry) => 120 + 2 * (entry.id.length + entry.name.length + entry.path.length);

/** Listings by (tree id, base path, recursive). 10,000 entries weigh about 3 MB. */
const LISTINGS = new WeightedLruCache<string, readonly TreeEntry[]>(64 * 1024 * 1024, (entries) =>
  entries.reduce((bytes, entry) => bytes + entryBytes(entry), 200),
);
/** Concurrent requests for one listing share its reading. */
const LISTING = new Map<string, Promise<readonly TreeEntry[]>>();

/**
 * The entries of tree `tree`, paths relative to `base`: directories, then files, then submodules, each
 * kind in git's order (ls-tree -r -t's for a recursive listing). The array is shared: never mutate it.
 */
export function listTree(
  read: ReadTree,
  tree: string,
  base: string,
  recursive: boolean,
): Promise<readonly TreeEntry[]> {
  const key = `${tree}\0${recursive ? 1 : 0}\0${base}`;
  const cached = LISTINGS.get(key);
  if (cached) return Promise.resolve(cached);
  let pending = LISTING.get(key);
  if (!pending) {
    pending = readListing(read, tree, base, recursive)
      .then((entries) => {
        LISTINGS.set(key, entries);
        return entries;
      })
      .finally(() => LISTING.delete(key));
    LISTING.set(key, pending);
  }
  return pending;
}

async function readListing(
  read: ReadTree,
  tree: string,
  base: string,
  recursive: boolean,
): Promise<readonly TreeEntry[]> {
  // ls-tree -r -t's order: each tree, then what it holds. Subtrees of a level are read concurrently.
  const list = async (id: string, prefix: string): Promise<TreeEntry[]> => {
    const own = entriesOf(await read(id), id.length / 2, prefix);
    if (!recursive) return own;
    const below = await Promise.all(
      own.map((entry) => (entry.type === 'tree' ? list(entry.id, entry.path) : undefined)),
    );
    const all: TreeEntry[] = [];
    own.forEach((entry, i) => {
      all.push(entry);
      for (const inner of below[i] ?? []) all.push(inner);
    });
    return all;
  };
  const entries = await list(tree, base);
  // Directories, then files, then submodules, each in git's order.
  return [
    ...entries.filter((entry) => entry.type === 'tree'),
    ...entries.filter((entry) => entry.type === 'blob'),
    ...entries.filter((entry) => entry.type === 'commit'),
  ];
}

/** Where each path of a listing stands, for keyset pages; built once per kept listing. */
const POSITIONS = new WeakMap<readonly TreeEntry[], Map<string, number>>();

/** The index of the entry at `path` in `entries`, or -1. */
export function positionOf(entries: readonly TreeEntry[], path: string): number {
  let positions = POSITIONS.get(entries);
  if (!positions) {
    positions = new Map(entries.map((entry, i) => [entry.path, i]));
    POSITIONS.set(entries, positions);
  }
  return positions.get(path) ?? -1;
}
