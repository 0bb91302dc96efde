/**
 * Reading tags out of a repository with `git for-each-ref`: names in the order asked for, then the
 * details of just the tags a page shows, fields separated by NUL bytes so no message can break parsing.
 */
import { resolveCommit } from './commits.js';
import { git } from './git.js';

export type TagOrder = 'name' | 'updated' | 'version';

const SORT_KEYS: Record<TagOrder, string> = {
  name: 'refname',
  // The tagger date of annotated tags, the committer date of lightweight tags' commits.
  updated: 'creatordate',
  version: 'version:refname',
};

/** Every tag name, sorted; ties keep ascending name order. */
export async function sortedTagNames(dir: string, order: TagOrder, descending: boolean): Promise<string[]> {
  const key = `--sort=${descending ? '-' : ''}${SORT_KEYS[order]}`;
  // The last --sort is the primary key; the first breaks its ties.
  const { stdout } = await git(
    ['for-each-ref', '--sort=refname', key, '--format=%(refname:strip=2)', 'refs/tags/'],
    { gitDir: dir },
  );
  // Ref names cannot contain newlines.
  return stdout.toString('utf8').split('\n').filter(Boolean);
}

export interface GitTag {
  name: string;
  /** The tag object for an annotated tag, the object itself for a lightweight one. */
  target: string;
  annotated: boolean;
  /** Annotated tags only: the message without its signature. */
  message: string | null;
  /** Annotated tags only: the armored signature, when there is one. */
  signature: string | null;
  taggerEmail: string | null;
  taggerDate: Date | null;
  /** The commit the tag points at through any tag objects, null for trees and blobs. */
  commitId: string | null;
}

const FIELDS = [
  '%(refname)',
  '%(objectname)',
  '%(objecttype)',
  '%(*objectname)',
  '%(*objecttype)',
  '%(taggeremail)',
  '%(taggerdate:iso-strict)',
  '%(contents:signature)',
  '%(contents)',
];
const FORMAT = `${FIELDS.join('%00')}%00%01`;

/** The named tags, in one call; names that are not tags are missing from the map. */
export async function readTags(dir: string, names: string[]): Promise<Map<string, GitTag>> {
  const tags = new Map<string, GitTag>();
  if (names.length === 0) return tags;
  const wanted = new Set(names);
  // Option-like names cannot reach git: every pattern starts with refs/tags/.
  const { stdout } = await git(
    ['for-each-ref', `--format=${FORMAT}`, ...names.map((n) => `refs/tags/${n}`)],
    {
      gitDir: dir,
    },
  );
  const nested: GitTag[] = [];
  for (const record of stdout.toString('utf8').split('\x00\x01')) {
    const fields = record.replace(/^\n/, '').split('\x00');
    if (fields.length < FIELDS.length) continue;
    const [refname, objectName, objectType, peeledName, peeledType, email, date, signature, ...rest] = fields;
    // The message is the last field: a NUL inside it only splits it further.
    const contents = rest.join('\x00');
    const name = refname.slice('refs/tags/'.length);
    // A pattern also matches the refs below it (`v1` matches `v1/rc`): keep exact names only.
    if (!wanted.has(name)) continue;
    const annotated = objectType === 'tag';
    const body =
      annotated && signature && contents.endsWith(signature)
        ? contents.slice(0, -signature.length)
        : contents;
    const tag: GitTag = {
      name,
      target: objectName,
      annotated,
      message: annotated ? body.replace(/\n+$/, '') : null,
      signature: annotated && signature ? signature : null,
      taggerEmail: annotated && email ? email.replace(/^<|>$/g, '') : null,
      taggerDate: annotated && date ? new Date(date) : null,
      commitId: objectType === 'commit' ? objectName : peeledType === 'commit' ? peeledName : null,
    };
    if (annotated && peeledType === 'tag') nested.push(tag);
    tags.set(name, tag);
  }
  // A tag of a tag: rare enough to peel one by one.
  for (const tag of nested) tag.commitId = await resolveCommit(dir, `refs/tags/${tag.name}`);
  return tags;
}
