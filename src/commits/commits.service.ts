/**
 * Commits: history read from git, single commits, and commits made through the API. The commit
 * flow (`commitToBranch`) is shared with the repository files family.
 */
import type { components, operations } from '../../generated/openapi.js';
import { canProject } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, badParameter, forbidden, notFound } from '../core/errors.js';
import { perPageOf, requestUrl, type RequestInfo } from '../core/pagination.js';
import {
  CommitBuildError,
  normalizeActionPath,
  readBuiltCommit,
  type FileAction,
} from '../git/commit-builder.js';
import type { CommitStats } from '../git/commit-stats.js';
import type { GitCommit } from '../git/commits.js';
import { ZERO_SHA } from '../git/ref-changes.js';
import { MESSAGES } from '../protected_branches/protected-refs.js';
import { RefUpdateRefused, type OpenRepository } from '../repository/repositories.service.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { readCommitFields } from './extension-points.js';
import { isUsableIdentityName, isValidBranchName, looksLikeObjectId } from '../git/ref-names.js';
import type { GitRepository, LogQuery } from '../git/repository.js';

export type ListCommitsParams = NonNullable<operations['listCommits']['parameters']['query']>;
export type CommitCreateParams = components['schemas']['CommitCreate'];

/** A commit with what the endpoints add to it. */
export interface CommitView {
  commit: GitCommit;
  stats?: CommitStats;
}

/** A 400 whose body is `{"message": ...}`, as GitLab answers refusals of the repository. */
export const repositoryError = (message: string) => new ApiError(400, { message });

const PUSH_REFUSED = 'You are not allowed to push into this branch';

/** How GitLab words a stale `last_commit_id`; each endpoint has its own sentence. */
export type StaleMessage = (path: string) => string;

export interface CommitToBranchOptions {
  branch: string;
  startBranch?: string;
  startSha?: string;
  force?: boolean;
  message: string;
  authorName?: string;
  authorEmail?: string;
  actions: Array<FileAction & { lastCommitId?: string }>;
  staleMessage: StaleMessage;
  /** The caller already answered "may push to this branch" in its own words. */
  pushChecked?: boolean;
}

/** The last second git's date parser reads correctly (2099-12-31T23:59:59Z). */
const LAST_GIT_TIME = 4102444799;

const SHA_PATTERN = /^([0-9a-f]{40}|[0-9a-f]{64})$/i;

const branchTip = async (git: GitRepository, branch: string) => (await git.branch(branch))?.sha ?? null;

export class CommitsService {
  constructor(
    private readonly services: Pick<ServiceRegistry, 'projects' | 'repositories' | 'protectedRefs'>,
    private readonly core: Pick<CoreDeps, 'dataSource' | 'contributions'>,
  ) {}

  /** What other families add to these commits' single representation (`commitFields`), by SHA. */
  detailFields(caller: Caller, view: ProjectView, shas: string[], externalUrl: string) {
    return readCommitFields(this.core.contributions, this.core.dataSource.manager, {
      caller,
      view,
      shas,
      externalUrl,
    });
  }

  /** May the caller push to `branch` (which may not exist yet)? GitLab's `can_push_to_branch?`. */
  async canPushToBranch(caller: Caller, repo: OpenRepository, branch: string): Promise<boolean> {
    const rules = this.services.protectedRefs;
    const actor = await rules.actor(caller, repo.view.accessLevel);
    if (!canProject(caller, 'push_code', this.services.projects.subject(repo.view))) {
      // A collaborator on a merge request from this fork may push to its source branch only.
      if (repo.view.project.archived) return false;
      actor.collaborationBranches = await rules.collaborationBranches(repo.view.project.id, caller, branch);
      if (!actor.collaborationBranches.has(branch)) return false;
    }
    const tip = await branchTip(repo.git, branch);
    const reason = await rules.refusal(repo.view.project, actor, {
      ref: `refs/heads/${branch}`,
      oldSha: tip ?? ZERO_SHA,
      // Any new commit on top of the tip: only the right to push is asked here, not to force.
      newSha: 'f'.repeat(40),
      forced: false,
    });
    // A name that can never be a branch is not a question of permission: the name check answers it.
    return reason === null || reason === MESSAGES.hexBranchName;
  }

  async list(caller: Caller, view: ProjectView, params: ListCommitsParams, request: RequestInfo) {
    const repo = this.services.repositories.open(view);
    const perPage = perPageOf(params);
    const page = Math.max(params.page ?? 1, 1);
    const query: LogQuery = {
      skip: (page - 1) * perPage,
      maxCount: perPage + 1,
      firstParent: params.first_parent,
      topoOrder: params.order === 'topo',
      author: params.author || undefined,
    };
    // Bounds go to git as epoch seconds, inclusive. Git misreads times from 2100 on, so a later
    // `since` matches nothing and a later `until` everything; so does an `until` before 1970.
    let nothing = false;
    for (const [name, round] of [
      ['since', Math.ceil],
      ['until', Math.floor],
    ] as const) {
      const value = params[name];
      if (value === undefined) continue;
      // Like Ruby's DateTime, a time without an offset is UTC.
      const time = Date.parse(/T[\d:.]+$/.test(value) ? `${value}Z` : value);
      if (Number.isNaN(time)) throw badParameter(`${name} is invalid`);
      const seconds = round(time / 1000);
      if (name === 'since' ? seconds > LAST_GIT_TIME : seconds < 0) nothing = true;
      else if (name === 'since' ? seconds > 0 : seconds <= LAST_GIT_TIME) query[name] = seconds;
    }
    let revision: string | null = null;
    if (params.all) query.all = true;
    else {
      revision = params.ref_name || repo.view.project.defaultBranch;
      if (revision?.startsWith('-')) throw repositoryError('ref_name is invalid');
      revision = revision ? await this.resolveRange(repo.git, revision) : null;
    }
    let commits: GitCommit[] = [];
    if (!nothing && (params.all || revision)) {
      const path = (params.path ?? '').replace(/^\/+/, '');
      commits = await repo.git.history({
        ...query,
        revisions: revision ? [revision] : [],
        paths: path ? [path] : [],
      });
    }
    const hasNext = commits.length > perPage;
    commits = commits.slice(0, perPage);
    if (!params.trailers) commits = commits.map((c) => ({ ...c, trailers: {}, extendedTrailers: {} }));
    const stats = params.with_stats ? await repo.git.commitStats(commits.map((c) => c.id)) : undefined;
    const items: CommitView[] = commits.map((commit) => ({ commit, stats: stats?.get(commit.id) }));
    return { repo, items, headers: pageHeaders(request, page, perPage, hasNext) };
  }

  /**
   * `a`, `a..b` or `a...b` with every side replaced by the commit it names (an empty side means HEAD, as
   * in git); null when a side names none. The walk then reads exactly the commits resolved here.
   */
  private async resolveRange(git: GitRepository, revision: string): Promise<string | null> {
    const parts = revision.split(/(\.\.\.?)/);
    if (parts.length > 3 || !parts.some((part, i) => i % 2 === 0 && part)) return null;
    const resolved = await Promise.all(
      parts.map((part, i) => (i % 2 === 1 ? part : git.resolveCommit(part || 'HEAD'))),
    );
    return resolved.every(Boolean) ? resolved.join('') : null;
  }

  async get(caller: Caller, view: ProjectView, sha: string, withStats: boolean) {
    const repo = this.services.repositories.open(view);
    const commit = await repo.git.commit(sha);
    if (!commit) throw notFound('Commit');
    const stats = withStats ? (await repo.git.commitStats([commit.id])).get(commit.id) : undefined;
    return { repo, view: { commit, stats } as CommitView };
  }

  async create(caller: Caller, view: ProjectView, params: CommitCreateParams) {
    const repo = this.services.repositories.open(view);
    if (!(await this.canPushToBranch(caller, repo, params.branch))) throw forbidden(PUSH_REFUSED);
    if (!params.branch.trim()) throw badParameter('branch is empty');
    if (!params.commit_message.trim()) throw badParameter('commit_message is empty');
    if (params.start_branch !== undefined && params.start_sha !== undefined)
      throw badParameter('start_branch, start_sha are mutually exclusive');
    if (params.start_project !== undefined) await this.checkStartProject(caller, repo, params.start_project);
    const actions = params.actions ?? [];
    if (actions.length === 0 && !params.allow_empty)
      throw badParameter('Provide at least one action, or set allow_empty to true');
    const fileActions = actions.map((action, index) => {
      const missing = (field: string) =>
        badParameter(`actions[${index}][${field}] is required for ${action.action} action`);
      if (action.action === 'update' && action.content === undefined) throw missing('content');
      if (action.action === 'move' && !action.previous_path) throw missing('previous_path');
      if (action.action === 'chmod' && action.execute_filemode === undefined)
        throw missing('execute_filemode');
      const content =
        action.content === undefined
          ? undefined
          : Buffer.from(action.content, action.encoding === 'base64' ? 'base64' : 'utf8');
      return {
        action: action.action,
        filePath: action.file_path,
        previousPath: action.previous_path,
        content,
        executeFilemode: action.execute_filemode,
        lastCommitId: action.last_commit_id,
      };
    });
    const sha = await this.commitToBranch(caller, repo, {
      branch: params.branch,
      startBranch: params.start_branch,
      startSha: params.start_sha,
      force: params.force,
      message: params.commit_message,
      authorName: params.author_name,
      authorEmail: params.author_email,
      actions: fileActions,
      staleMessage: (path) => `The file has changed since you started editing it: ${path}`,
      pushChecked: true,
    });
    // Presented from the object just written, without a `git log` process, when that reading is exact.
    const commit = (await readBuiltCommit(repo.git.dir, sha)) ?? (await repo.git.commit(sha))!;
    const stats = params.stats === false ? undefined : (await repo.git.commitStats([sha])).get(sha);
    return { repo, view: { commit, stats } as CommitView };
  }

  /** Without forks, the only project a commit may start from is the project itself. */
  private async checkStartProject(caller: Caller, repo: OpenRepository, startProject: string | number) {
    const start = await this.services.projects.find(caller, startProject);
    if (start.project.id === repo.view.project.id) return;
    throw forbidden(
      `Project is not included in the fork network for ${start.project.namespace.fullName} / ${start.project.name}`,
    );
  }

  /**
   * GitLab's commit flow (Commits::CreateService): where the commit starts, whether the branch may be
   * created or moved, stale `last_commit_id`s, then the commit and the branch update through the push
   * rules. Refusals answer 400 with GitLab's message. Returns the new commit's id.
   */
  async commitToBranch(
    caller: Caller,
    repo: OpenRepository,
    options: CommitToBranchOptions,
  ): Promise<string> {
    const { git } = repo;
    const { branch, startSha, force = false } = options;
    if (!options.pushChecked && !(await this.canPushToBranch(caller, repo, branch)))
      throw repositoryError(PUSH_REFUSED);
    if (startSha !== undefined && options.startBranch !== undefined)
      throw repositoryError("You can't pass both start_branch and start_sha");
    let parent: string | null = null;
    if (startSha !== undefined) {
      if (!SHA_PATTERN.test(startSha)) throw repositoryError(`Invalid start_sha '${startSha}'`);
      parent = await git.resolveCommit(startSha);
      if (!parent) throw repositoryError(`Cannot find start_sha '${startSha}'`);
    }
    const startBranch = options.startBranch ?? (startSha === undefined ? branch : undefined);
    // Commits to one branch queue in this process; one that still loses the race to another writer (a
    // push, another process) is built again on the new tip, when it continues the branch.
    const continuesBranch = startBranch === branch && startSha === undefined && !force;
    return this.services.repositories.serializeRef(repo, `refs/heads/${branch}`, async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.commitOnce(caller, repo, options, parent, startBranch);
        } catch (err) {
          const lostRace = err instanceof RefUpdateRefused && err.conflict;
          if (!(lostRace && continuesBranch && attempt < COMMIT_ATTEMPTS))
            throw translateRefusal(err, branch);
        }
      }
    });
  }

  private async commitOnce(
    caller: Caller,
    repo: OpenRepository,
    options: CommitToBranchOptions,
    startParent: string | null,
    startBranch: string | undefined,
  ): Promise<string> {
    const { git } = repo;
    const { branch, startSha, force = false } = options;
    let parent = startParent;
    const empty = await git.isEmpty();
    if (startBranch !== undefined) {
      parent = await branchTip(git, startBranch);
      if (!parent && !empty)
        throw repositoryError('You can only create or edit files when you are on a branch');
    }
    const tip = await branchTip(git, branch);
    const differentBranch = startBranch !== branch || startSha !== undefined;
    if (!empty && differentBranch && tip && !force)
      throw repositoryError(
        `A branch called '${branch}' already exists. Switch to that branch in order to make changes`,
      );
    if (!tip && (!isValidBranchName(branch) || looksLikeObjectId(branch)))
      throw repositoryError(
        `Something went wrong when we tried to create '${branch}' for you: Branch name is invalid`,
      );

    for (const action of options.actions) {
      if (!action.lastCommitId || !parent || !['update', 'move', 'delete', 'chmod'].includes(action.action))
        continue;
      const path = normalizeActionPath(action.previousPath ?? action.filePath);
      const last = await git.lastCommitForPath(parent, path);
      if (last && last !== action.lastCommitId) throw repositoryError(options.staleMessage(path));
    }
    const user = caller.user!;
    const committer = { name: user.name, email: user.email };
    const authorName = options.authorName || user.name;
    if (!isUsableIdentityName(authorName))
      throw repositoryError('Commit author name consists only of disallowed characters');
    const sha = await git.buildCommit({
      parent,
      actions: options.actions,
      message: options.message,
      committer,
      author: { name: authorName, email: options.authorEmail || user.email },
    });
    await this.services.repositories.updateRefs(caller, repo, [
      { ref: `refs/heads/${branch}`, oldSha: tip ?? ZERO_SHA, newSha: sha },
    ]);
    return sha;
  }
}

const COMMIT_ATTEMPTS = 5;

/** A failed commit in GitLab's words (400). */
function translateRefusal(err: unknown, branch: string): unknown {
  if (err instanceof CommitBuildError) return repositoryError(err.message);
  if (err instanceof RefUpdateRefused)
    return repositoryError(
      err.conflict ? `Could not update refs/heads/${branch}. Please refresh and try again.` : err.reason,
    );
  return err;
}

/**
 * GitLab's commit lists count nothing: page headers and `prev`/`next`/`first` links, without
 * `X-Total`, `X-Total-Pages` or a `last` link.
 */
function pageHeaders(request: RequestInfo, page: number, perPage: number, hasNext: boolean) {
  const at = (p: number) => requestUrl(request, { page: String(p), per_page: String(perPage) });
  const links = [
    ...(page > 1 ? [`<${at(page - 1)}>; rel="prev"`] : []),
    ...(hasNext ? [`<${at(page + 1)}>; rel="next"`] : []),
    `<${at(1)}>; rel="first"`,
  ];
  return {
    'X-Per-Page': String(perPage),
    'X-Page': String(page),
    'X-Next-Page': hasNext ? String(page + 1) : '',
    'X-Prev-Page': page > 1 ? String(page - 1) : '',
    Link: links.join(', '),
  };
}

export type { CommitStats };
