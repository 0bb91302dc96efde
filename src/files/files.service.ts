/**
 * Repository files: one file read at a ref (JSON, raw bytes streamed, blame) and one-file commits,
 * which go through the commit flow of the commits family.
 */
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import type { components } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { ApiError, badParameter, notFound } from '../core/errors.js';
import { CommitsService, lastCommitForPath, type StaleMessage } from '../commits/commits.service.js';
import type { FileAction } from '../git/commit-builder.js';
import { readCommits, resolveCommit, type GitCommit } from '../git/commits.js';
import { git, spawnGit } from '../git/git.js';
import type { OpenRepository } from '../git/repositories.service.js';
import type { ServiceRegistry } from '../core/family.js';

export type FileWriteParams = components['schemas']['RepositoryFileWrite'];
export type FileDeleteParams = components['schemas']['RepositoryFileDelete'];

/** A file at a commit, as GitLab's `blob_data` describes it. */
export interface BlobInfo {
  repo: OpenRepository;
  fileName: string;
  filePath: string;
  size: number;
  blobId: string;
  mode: string;
  ref: string;
  commitId: string;
  lastCommitId: string;
}

/** How many leading bytes decide text or binary, as git itself decides. */
const BINARY_PROBE = 8000;

/** Grape's `file_path: true` rule: no absolute path, no `..` segment. */
function validateFilePath(filePath: string): void {
  if (!filePath || filePath.startsWith('/') || filePath.split('/').includes('..'))
    throw badParameter('file_path should be a valid file path');
}

/** The entry named `name` in tree `treeish`, or null (also when `treeish` is not a tree). */
async function treeEntry(dir: string, treeish: string, name: string) {
  const listing = await git(['ls-tree', '-z', '-l', treeish], { gitDir: dir, okCodes: [128] });
  if (listing.code !== 0) return null;
  for (const record of listing.stdout.toString('utf8').split('\0')) {
    const match = /^(\d+) (\w+) ([0-9a-f]+) +(-|\d+)\t([\s\S]*)$/.exec(record);
    if (match && match[5] === name)
      return { mode: match[1], type: match[2], sha: match[3], size: Number(match[4]) };
  }
  return null;
}

/** Reads a blob through without holding it: its SHA-256, and whether it looks binary. */
function scanBlob(dir: string, blobId: string): Promise<{ sha256: string; binary: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(['cat-file', 'blob', blobId], { gitDir: dir });
    const hash = crypto.createHash('sha256');
    let probed = 0;
    let binary = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      if (probed < BINARY_PROBE) {
        if (chunk.subarray(0, BINARY_PROBE - probed).includes(0)) binary = true;
        probed += chunk.length;
      }
    });
    child.stderr!.resume();
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve({ sha256: hash.digest('hex'), binary })
        : reject(new Error(`git cat-file ${code}`)),
    );
    child.stdin!.end();
  });
}

export class FilesService {
  private readonly commits: CommitsService;

  constructor(private readonly services: Pick<ServiceRegistry, 'commits' | 'repositories'>) {
    this.commits = services.commits;
  }

  /** The file at `ref` (the default branch when undefined): 404 Commit or File Not Found. */
  async blob(
    caller: Caller,
    projectId: string | number,
    filePath: string,
    ref: string | undefined,
  ): Promise<BlobInfo> {
    validateFilePath(filePath);
    if (ref !== undefined && ref.trim() === '') throw badParameter('ref is empty');
    const repo = await this.services.repositories.open(caller, projectId, 'read_code');
    const revision = ref ?? repo.view.project.defaultBranch;
    const commitId = revision ? await resolveCommit(repo.dir, revision) : null;
    if (!commitId) throw notFound('Commit');
    const slash = filePath.lastIndexOf('/');
    const parent = slash < 0 ? `${commitId}^{tree}` : `${commitId}:${filePath.slice(0, slash)}`;
    const fileName = filePath.slice(slash + 1);
    const entry = fileName ? await treeEntry(repo.dir, parent, fileName) : null;
    if (!entry || entry.type !== 'blob') throw notFound('File');
    return {
      repo,
      fileName,
      filePath,
      size: entry.size,
      blobId: entry.sha,
      mode: entry.mode,
      ref: ref ?? revision!,
      commitId,
      lastCommitId: (await lastCommitForPath(repo.dir, commitId, filePath)) ?? commitId,
    };
  }

  /** The file with its whole content, for the JSON answer. */
  async read(caller: Caller, projectId: string | number, filePath: string, ref: string) {
    const info = await this.blob(caller, projectId, filePath, ref);
    const { stdout } = await git(['cat-file', 'blob', info.blobId], { gitDir: info.repo.dir });
    return { info, content: stdout, sha256: crypto.createHash('sha256').update(stdout).digest('hex') };
  }

  /**
   * The file's bytes as a stream. The blob is read twice (once for its SHA-256 and type, once to
   * send), never held whole in memory; errors are all raised before the stream is returned.
   */
  async raw(caller: Caller, projectId: string | number, filePath: string, ref: string | undefined) {
    const info = await this.blob(caller, projectId, filePath, ref);
    const { sha256, binary } = await scanBlob(info.repo.dir, info.blobId);
    const child = spawnGit(['cat-file', 'blob', info.blobId], { gitDir: info.repo.dir });
    child.stdin!.end();
    child.stderr!.resume();
    const stream = child.stdout as Readable;
    // A client that goes away must not leave git blocked on a full pipe.
    stream.once('close', () => child.exitCode === null && child.kill());
    return { info, sha256, binary, stream };
  }

  /**
   * The file's lines grouped into consecutive ranges last changed by one commit, with the file itself
   * for the headers; the commits of all ranges are read in one call.
   */
  async blame(
    caller: Caller,
    projectId: string | number,
    filePath: string,
    ref: string,
    range?: { start: number; end: number },
  ) {
    if (range && range.start > range.end)
      throw new ApiError(400, { message: 'range[start] must be less than or equal to range[end]' });
    const file = await this.read(caller, projectId, filePath, ref);
    const { dir } = file.info.repo;
    const result = await git(
      [
        'blame',
        '--porcelain',
        ...(range ? ['-L', `${range.start},${range.end}`] : []),
        file.info.commitId,
        '--',
        filePath,
      ],
      { gitDir: dir, okCodes: [128] },
    );
    if (result.code !== 0) throw new ApiError(400, { message: 'range is outside of the file length' });
    const ranges: Array<{ sha: string; lines: string[] }> = [];
    let current = '';
    for (const line of result.stdout.toString('utf8').split('\n')) {
      if (line.startsWith('\t')) {
        const last = ranges[ranges.length - 1];
        if (last?.sha === current) last.lines.push(line.slice(1));
        else ranges.push({ sha: current, lines: [line.slice(1)] });
      } else {
        const header = /^([0-9a-f]{40,64}) \d+ \d+/.exec(line);
        if (header) current = header[1];
      }
    }
    const commits = await readCommits(
      dir,
      ranges.map((r) => r.sha),
    );
    return {
      file,
      ranges: ranges.map((r) => ({ commit: commits.get(r.sha) as GitCommit, lines: r.lines })),
    };
  }

  async create(caller: Caller, projectId: string | number, filePath: string, params: FileWriteParams) {
    return this.commitOne(caller, projectId, filePath, params, {
      action: 'create',
      content: decode(params),
      executeFilemode: params.execute_filemode,
    });
  }

  async update(caller: Caller, projectId: string | number, filePath: string, params: FileWriteParams) {
    return this.commitOne(
      caller,
      projectId,
      filePath,
      params,
      { action: 'update', content: decode(params), executeFilemode: params.execute_filemode },
      () => 'You are attempting to update a file that has changed since you started editing it.',
    );
  }

  async delete(caller: Caller, projectId: string | number, filePath: string, params: FileDeleteParams) {
    return this.commitOne(
      caller,
      projectId,
      filePath,
      params,
      { action: 'delete' },
      () => 'You are attempting to delete a file that has been previously updated.',
    );
  }

  private async commitOne(
    caller: Caller,
    projectId: string | number,
    filePath: string,
    params: FileDeleteParams,
    action: Omit<FileAction, 'filePath'>,
    staleMessage: StaleMessage = () => '',
  ): Promise<void> {
    validateFilePath(filePath);
    if (!params.branch.trim()) throw badParameter('branch is empty');
    if (!params.commit_message.trim()) throw badParameter('commit_message is empty');
    const repo = await this.services.repositories.open(caller, projectId, 'push_code');
    await this.commits.commitToBranch(caller, repo, {
      branch: params.branch,
      startBranch: params.start_branch,
      message: params.commit_message,
      authorName: params.author_name,
      authorEmail: params.author_email,
      actions: [{ ...action, filePath, lastCommitId: params.last_commit_id }],
      staleMessage,
    });
  }
}

const decode = (params: FileWriteParams) =>
  Buffer.from(params.content, params.encoding === 'base64' ? 'base64' : 'utf8');
