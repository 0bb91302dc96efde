/**
 * `git archive`, streamed. Compression runs inside git (its built-in gzip, and bzip2 as a filter), so
 * bytes flow from git to the client untouched.
 */
import { spawnGit } from './git.js';
import { streamProcess, type ProcessOutput } from './process-stream.js';

/** The archive formats git writes. */
export type GitArchiveFormat = 'tar.gz' | 'tar' | 'tar.bz2' | 'zip';

export interface ArchiveRequest {
  /** A commit id (resolved beforehand: never user input). */
  commit: string;
  format: GitArchiveFormat;
  prefix: string;
  /** One file or directory, or '' for the whole tree. */
  path: string;
  excludePaths: string[];
}

/**
 * Starts `git archive` and resolves once it produced its first bytes, so that a failure still becomes a
 * JSON error (ProcessFailed); the rest streams.
 */
export function startArchive(dir: string, request: ArchiveRequest): Promise<ProcessOutput> {
  const pathspecs = [
    ...(request.path ? [`:(literal)${request.path}`] : []),
    ...request.excludePaths.map((excluded) => `:(exclude,literal)${excluded}`),
  ];
  const child = spawnGit(
    [
      '-c',
      'tar.tar.bz2.command=bzip2 -c',
      'archive',
      `--format=${request.format}`,
      `--prefix=${request.prefix}/`,
      // archive reads `--` after --end-of-options as a pathspec; every pathspec here starts with `:(`.
      '--end-of-options',
      request.commit,
      ...pathspecs,
    ],
    { gitDir: dir },
  );
  child.stdin!.end();
  return streamProcess(child, 1);
}
