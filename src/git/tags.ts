/**
 * Reading tags: names in the order asked for with `git for-each-ref` (cached per ref-store snapshot by
 * the caller), then the details of just the tags a page shows, parsed from their objects.
 */
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

/** Lines that start a signature at the end of a tag message, as git recognises them. */
const SIGNATURE_START = /^-----BEGIN (PGP SIGNATURE|PGP MESSAGE|SIGNED MESSAGE|SSH SIGNATURE)-----/;

export interface TagObject {
  object: string;
  type: string;
  taggerEmail: string | null;
  taggerDate: Date | null;
  /** The message as `%(contents)` gives it: from the subject to the end, signature included. */
  contents: string;
  /** The signature at the end of the contents, as `%(contents:signature)` gives it, or ''. */
  signature: string;
}

/** A tag object's fields, read as `git for-each-ref` reads them (ref-filter's rules). */
export function parseTagObject(data: Buffer): TagObject {
  const text = data.toString('utf8');
  const headerEnd = text.indexOf('\n\n');
  const header = headerEnd === -1 ? text : text.slice(0, headerEnd);
  const field = (name: string) => new RegExp(`^${name} (.*)$`, 'm').exec(header)?.[1] ?? null;
  const tagger = /^(.*?) ?<([^>]*)> (\d+) ([+-]\d{4})$/.exec(field('tagger') ?? '');
  // Blank lines before the subject are skipped, as for-each-ref skips them.
  const contents = headerEnd === -1 ? '' : text.slice(headerEnd + 2).replace(/^\n+/, '');
  let signatureAt = contents.length;
  for (let at = 0; at < contents.length;) {
    if (SIGNATURE_START.test(contents.slice(at, at + 40))) signatureAt = at;
    const eol = contents.indexOf('\n', at);
    at = eol === -1 ? contents.length : eol + 1;
  }
  return {
    object: field('object') ?? '',
    type: field('type') ?? '',
    taggerEmail: tagger ? tagger[2] : null,
    taggerDate: tagger ? new Date(Number(tagger[3]) * 1000) : null,
    contents,
    signature: contents.slice(signatureAt),
  };
}

/** A tag as the API shows it, from its ref's object and, for an annotated tag, the tag object. */
export function tagFromObject(
  name: string,
  target: string,
  objectType: string,
  parsed: TagObject | null,
  commitId: string | null,
): GitTag {
  if (!parsed)
    return {
      name,
      target,
      annotated: false,
      message: null,
      signature: null,
      taggerEmail: null,
      taggerDate: null,
      commitId: objectType === 'commit' ? target : null,
    };
  const body = parsed.signature ? parsed.contents.slice(0, -parsed.signature.length) : parsed.contents;
  return {
    name,
    target,
    annotated: true,
    message: body.replace(/\n+$/, ''),
    signature: parsed.signature || null,
    taggerEmail: parsed.taggerEmail || null,
    taggerDate: parsed.taggerDate,
    commitId,
  };
}
