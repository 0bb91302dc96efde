/** Repository archives as GitLab names them; git writes them (src/git/archive.ts). */
import type { GitArchiveFormat } from '../git/archive.js';

export const ARCHIVE_FORMATS = ['tar.gz', 'tar', 'tar.bz2', 'tbz', 'tbz2', 'tb2', 'bz2', 'zip'] as const;
export type ArchiveFormat = (typeof ARCHIVE_FORMATS)[number];

/** git's own format name for each of GitLab's suffixes. */
export const GIT_FORMAT: Record<ArchiveFormat, GitArchiveFormat> = {
  'tar.gz': 'tar.gz',
  tar: 'tar',
  'tar.bz2': 'tar.bz2',
  tbz: 'tar.bz2',
  tbz2: 'tar.bz2',
  tb2: 'tar.bz2',
  bz2: 'tar.bz2',
  zip: 'zip',
};

export const archiveContentType = (format: ArchiveFormat) =>
  format === 'zip' ? 'application/zip' : 'application/octet-stream';

/** A path as the archive parameters take it: relative, without leading or trailing slashes. */
export const trimSlashes = (value: string) => value.replace(/^\/+|\/+$/g, '');

/**
 * GitLab's archive_prefix with append_sha: the top-level directory of the archive and the file name
 * without its extension: `<project path>-<ref, slashes as dashes>-<commit sha>[-<path, slashes as dashes>]`.
 */
export function archivePrefix(projectPath: string, ref: string, sha: string, path: string): string {
  const segments = [projectPath, ref.replace(/\//g, '-'), sha];
  if (path) segments.push(path.replace(/\//g, '-'));
  return segments.join('-');
}

/** `attachment; filename="..."`, with an RFC 5987 form as well when the name is not plain ASCII. */
export function attachmentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  if (ascii === filename) return `attachment; filename="${filename}"`;
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
