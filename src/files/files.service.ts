/**
 * Repository files: one file read at a ref (JSON, raw bytes streamed, blame) and one-file commits,
 * which go through the commit flow of the commits family.
 */
import crypto from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { Caller } from '../core/auth.js';
import { ApiError, badParameter, notFound } from '../core/errors.js';
import { CommitsService, type StaleMessage } from '../commits/commits.service.js';
import type { FileAction } from '../git/commit-builder.js';
import type { GitCommit } from '../git/commits.js';
import type { OpenRepository } from '../repository/repositories.service.js';
import type { ProjectView } from '../projects/projects.service.js';
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

export class FilesService {
  private readonly commits: CommitsService;

  constructor(private readonly services: Pick<ServiceRegistry, 'commits' | 'repositories'>) {
    this.commits = services.commits;
  }

  /** The file at `ref` (the default branch when undefined): 404 Commit or File Not Found. */
  async blob(
    caller: Caller,
    view: ProjectView,
    filePath: string,
    ref: string | undefined,
  ): Promise<BlobInfo> {
    validateFilePath(filePath);
    if (ref !== undefined && ref.trim() === '') throw badParameter('ref is empty');
    const repo = this.services.repositories.open(view);
    const revision = ref ?? repo.view.project.defaultBranch;
    const commitId = revision ? await repo.git.resolveCommit(revision) : null;
    if (!commitId) throw notFound('Commit');
    const slash = filePath.lastIndexOf('/');
    const fileName = filePath.slice(slash + 1);
    const entry = fileName
      ? await repo.git.treeEntry(commitId, slash < 0 ? '' : filePath.slice(0, slash), fileName)
      : null;
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
      lastCommitId: (await repo.git.lastCommitForPath(commitId, filePath)) ?? commitId,
    };
  }

  /** The file with its whole content, for the JSON answer. */
  async read(caller: Caller, view: ProjectView, filePath: string, ref: string) {
    const info = await this.blob(caller, view, filePath, ref);
    const content = await info.repo.git.readBlob(info.blobId);
    return { info, content, sha256: crypto.createHash('sha256').update(content).digest('hex') };
  }

  /**
   * The file's bytes as a stream: a small blob is read once; a large one twice (once for its SHA-256
   * and type, once to send), never held whole in memory. Errors are all raised before the stream is
   * returned.
   */
  async raw(caller: Caller, view: ProjectView, filePath: string, ref: string | undefined) {
    const info = await this.blob(caller, view, filePath, ref);
    // A client that goes away stops git: the stream ends it when destroyed.
    const { sha256, binary, stream } = await info.repo.git.blobToSend(info.blobId, info.size, BINARY_PROBE);
    return { info, sha256, binary, stream };
  }

  /**
   * The file's lines grouped into consecutive ranges last changed by one commit, with the file itself
   * for the headers; the commits of all ranges are read in one call.
   */
  async blame(
    caller: Caller,
    view: ProjectView,
    filePath: string,
    ref: string,
    range?: { start: number; end: number },
  ) {
    if (range && range.start > range.end)
      throw new ApiError(400, { message: 'range[start] must be less than or equal to range[end]' });
    const file = await this.read(caller, view, filePath, ref);
    const { git } = file.info.repo;
    const ranges = await git.blame(file.info.commitId, filePath, range);
    if (!ranges) throw new ApiError(400, { message: 'range is outside of the file length' });
    const commits = await git.commits(ranges.map((r) => r.sha));
    return {
      file,
      ranges: ranges.map((r) => ({ commit: commits.get(r.sha) as GitCommit, lines: r.lines })),
    };
  }

  async create(caller: Caller, view: ProjectView, filePath: string, params: FileWriteParams) {
    return this.commitOne(caller, view, filePath, params, {
      action: 'create',
      content: decode(params),
      executeFilemode: params.execute_filemode,
    });
  }

  async update(caller: Caller, view: ProjectView, filePath: string, params: FileWriteParams) {
    return this.commitOne(
      caller,
      view,
      filePath,
      params,
      { action: 'update', content: decode(params), executeFilemode: params.execute_filemode },
      () => 'You are attempting to update a file that has changed since you started editing it.',
    );
  }

  async delete(caller: Caller, view: ProjectView, filePath: string, params: FileDeleteParams) {
    return this.commitOne(
      caller,
      view,
      filePath,
      params,
      { action: 'delete' },
      () => 'You are attempting to delete a file that has been previously updated.',
    );
  }

  private async commitOne(
    caller: Caller,
    view: ProjectView,
    filePath: string,
    params: FileDeleteParams,
    action: Omit<FileAction, 'filePath'>,
    staleMessage: StaleMessage = () => '',
  ): Promise<void> {
    validateFilePath(filePath);
    if (!params.branch.trim()) throw badParameter('branch is empty');
    if (!params.commit_message.trim()) throw badParameter('commit_message is empty');
    const repo = this.services.repositories.open(view);
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
