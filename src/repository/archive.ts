/**
 * Repository archives as GitLab names and lays them out, streamed from `git archive`. Compression runs
 * inside git (its built-in gzip, and bzip2 as a filter), so bytes flow from git to the client untouched.
 */
import { spawnGit } from '../git/git.js';
import { streamProcess, type ProcessOutput } from './streams.js';

export const ARCHIVE_FORMATS = ['tar.gz', 'tar', 'tar.bz2', 'tbz', 'tbz2', 'tb2', 'bz2', 'zip'] as const;
export type ArchiveFormat = (typeof ARCHIVE_FORMATS)[number];

/** git's own format name for each of GitLab's suffixes. */
const GIT_FORMAT: Record<ArchiveFormat, 'tar.gz' | 'tar' | 'tar.bz2' | 'zip'> = {
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

export interface ArchiveRequest {
  dir: string;
  commit: string;
  format: ArchiveFormat;
  prefix: string;
  /** One file or directory, or '' for the whole tree. */
  path: string;
  excludePaths: string[];
}

/**
 * Starts `git archive` and resolves once it produced its first bytes, so that a failure still becomes a
 * JSON error; the rest streams.
 */
export function startArchive(request: ArchiveRequest): Promise<ProcessOutput> {
  const pathspecs = [
    ...(request.path ? [`:(literal)${request.path}`] : []),
    ...request.excludePaths.map((excluded) => `:(exclude,literal)${excluded}`),
  ];
  const child = spawnGit(
    [
      '-c',
      'tar.tar.bz2.command=bzip2 -c',
      'archive',
      `--format=${GIT_FORMAT[request.format]}`,
      `--prefix=${request.prefix}/`,
      request.commit,
      '--',
      ...pathspecs,
    ],
    { gitDir: request.dir },
  );
  child.stdin!.end();
  return streamProcess(child, 1);
}
