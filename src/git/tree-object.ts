/** Git's tree object format: `<mode> <name>\0<raw id>` per entry, in git's order. */
export interface RawTreeEntry {
  /** As git stores it: `40000` for a tree, `100644`, `100755`, `120000`, `160000`. */
  mode: string;
  name: string;
  id: string;
}

/**
 * The entries of a tree object. Names decode as `utf8` for display, or as `latin1` to keep their bytes
 * exactly for writing a tree back.
 */
export function parseTreeObject(data: Buffer, idBytes: number, names: 'utf8' | 'latin1'): RawTreeEntry[] {
  return mapTreeObject(data, idBytes, names, (mode, name, id) => ({ mode, name, id }));
}

/** What `make` builds of each entry of a tree object, in git's order, with no object in between. */
export function mapTreeObject<T>(
  data: Buffer,
  idBytes: number,
  names: 'utf8' | 'latin1',
  make: (mode: string, name: string, id: string) => T,
): T[] {
  const entries: T[] = [];
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(32, offset);
    const nul = data.indexOf(0, space);
    entries.push(
      make(
        data.toString('latin1', offset, space),
        data.toString(names, space + 1, nul),
        data.toString('hex', nul + 1, nul + 1 + idBytes),
      ),
    );
    offset = nul + 1 + idBytes;
  }
  return entries;
}
