import type { DataSource } from 'typeorm';
import type { operations } from '../../generated/openapi.js';
import { canProject } from '../core/abilities.js';
import type { Caller } from '../core/auth.js';
import { ApiError, conflict, notFound } from '../core/errors.js';
import { offsetHeaders, perPageOf, type Page, type RequestInfo } from '../core/pagination.js';
import { refPatternMatches, ZERO_SHA, type RefChange } from '../git/ref-changes.js';
import { RefUpdateRefused, type OpenRepository } from '../repository/repositories.service.js';
import type { BranchRef } from '../git/repository.js';
import type { ProjectView } from '../projects/projects.service.js';
import { ProtectedBranch } from '../protected_branches/protected-branch.entity.js';
import { entryAllows, type PushActor } from '../protected_branches/protected-refs.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { isValidBranchName } from '../git/ref-names.js';
import { filterByRegex, requireNonEmpty, searchMatcher } from './branch-filters.js';
import type { BranchRecord } from './branch.presenter.js';

export type ListBranchesParams = NonNullable<operations['listBranches']['parameters']['query']>;
export type CreateBranchParams = NonNullable<
  operations['createBranch']['requestBody']
>['content']['application/json'];

const HEADS = 'refs/heads/';
const HEX_NAME = /^[0-9a-f]{40}(-\/|\/|$)/i;

const branchNotFound = () => notFound('Branch');
const refused = (message: string) => new ApiError(400, { message });

/** The project's protection rules and the caller, loaded once per request, applied per branch. */
class BranchRules {
  constructor(
    private readonly rules: ProtectedBranch[],
    private readonly actor: PushActor | null,
    private readonly mayPushCode: boolean,
  ) {}

  matching(name: string): ProtectedBranch[] {
    return this.rules.filter((rule) => refPatternMatches(rule.name, name));
  }

  describe(name: string) {
    const rules = this.matching(name);
    const entries = rules.flatMap((rule) => rule.accessLevels ?? []);
    const developers = (action: string) =>
      entries.some((entry) => entry.action === action && entry.accessLevel === 30);
    const actor = this.actor;
    const pushAllowed = (rule: ProtectedBranch) =>
      actor !== null &&
      (rule.accessLevels ?? []).some((entry) => entry.action === 'push' && entryAllows(entry, actor));
    return {
      protected: rules.length > 0,
      developersCanPush: developers('push'),
      developersCanMerge: developers('merge'),
      // As for pushes: any entry of any matching rule may grant it.
      canPush: this.mayPushCode && actor !== null && (rules.length === 0 || rules.some(pushAllowed)),
    };
  }
}

export class BranchesService {
  private readonly dataSource: DataSource;

  constructor(
    deps: CoreDeps,
    private readonly services: Pick<ServiceRegistry, 'projects' | 'repositories' | 'protectedRefs'>,
  ) {
    this.dataSource = deps.dataSource;
  }

  private async branchRules(caller: Caller, repository: OpenRepository): Promise<BranchRules> {
    const { view } = repository;
    const { branches: rules } = await this.services.protectedRefs.projectRules(view.project.id);
    const actor = caller.user ? await this.services.protectedRefs.actor(caller, view.accessLevel) : null;
    const mayPushCode = canProject(caller, 'push_code', this.services.projects.subject(view));
    return new BranchRules(rules, actor, mayPushCode);
  }

  /** Turns branch heads into records: commits read in one git call, merged-ness in another. */
  private async records(
    caller: Caller,
    repository: OpenRepository,
    refs: BranchRef[],
    defaultHead: BranchRef | null,
  ): Promise<BranchRecord[]> {
    if (refs.length === 0) return [];
    const { git, view } = repository;
    const commits = await git.commits(refs.map((ref) => ref.sha));
    const merged = new Set<string>();
    if (defaultHead) {
      for (const { ref } of await git.mergedBranches(defaultHead.sha)) merged.add(ref.slice(HEADS.length));
    }
    const rules = await this.branchRules(caller, repository);
    return refs.map((ref) => ({
      name: ref.name,
      commit: commits.get(ref.sha)!,
      merged: defaultHead !== null && ref.sha !== defaultHead.sha && merged.has(ref.name),
      default: ref.name === view.project.defaultBranch,
      ...rules.describe(ref.name),
    }));
  }

  async list(
    caller: Caller,
    view: ProjectView,
    params: ListBranchesParams,
    request: RequestInfo,
  ): Promise<{ repository: OpenRepository; page: Page<BranchRecord> }> {
    const repository = this.services.repositories.open(view);
    const all = await repository.git.branches();
    let refs = [...all];
    const sort = params.sort ?? 'name_asc';
    if (sort !== 'name_asc') {
      const direction = sort === 'updated_asc' ? 1 : -1;
      refs.sort((a, b) => (a.date - b.date) * direction || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    }
    if (params.search) {
      const matcher = searchMatcher(params.search);
      refs = refs.filter((ref) => matcher.test(ref.name));
      if (!matcher.operators) {
        // An exact name comes first, as GitLab lists it.
        const exact = refs.findIndex((ref) => ref.name.toLowerCase() === params.search!.toLowerCase());
        if (exact > 0) refs.unshift(...refs.splice(exact, 1));
      }
    }
    if (params.regex !== undefined) {
      const names = new Set(
        filterByRegex(
          refs.map((ref) => ref.name),
          params.regex,
        ),
      );
      refs = refs.filter((ref) => names.has(ref.name));
    }
    const perPage = perPageOf(params);
    const pageNumber = Math.max(params.page ?? 1, 1);
    const slice = refs.slice((pageNumber - 1) * perPage, pageNumber * perPage);
    const defaultHead = all.find((ref) => ref.name === repository.view.project.defaultBranch) ?? null;
    return {
      repository,
      page: {
        items: await this.records(caller, repository, slice, defaultHead),
        headers: offsetHeaders(refs.length, pageNumber, perPage, request),
      },
    };
  }

  async get(
    caller: Caller,
    view: ProjectView,
    name: string,
  ): Promise<{ repository: OpenRepository; branch: BranchRecord }> {
    const repository = this.services.repositories.open(view);
    return { repository, branch: await this.read(caller, repository, name) };
  }

  private async read(caller: Caller, repository: OpenRepository, name: string): Promise<BranchRecord> {
    const ref = await repository.git.branch(name);
    if (!ref) throw branchNotFound();
    const defaultBranch = repository.view.project.defaultBranch;
    const defaultHead =
      defaultBranch === name ? ref : defaultBranch ? await repository.git.branch(defaultBranch) : null;
    const [record] = await this.records(caller, repository, [ref], defaultHead);
    return record;
  }

  async create(
    caller: Caller,
    view: ProjectView,
    params: CreateBranchParams,
  ): Promise<{ repository: OpenRepository; branch: BranchRecord }> {
    const repository = this.services.repositories.open(view);
    requireNonEmpty({ branch: params.branch, ref: params.ref });
    const { git } = repository;
    const { branch, ref } = params;
    let existing = await git.branches();
    if (existing.length === 0) {
      await this.createDefaultBranch(caller, repository);
      existing = await git.branches();
    }
    if (!isValidBranchName(branch)) throw refused('Branch name is invalid');
    if (existing.some((other) => other.name === branch)) throw refused('Branch already exists');
    const sha = await git.resolveCommit(ref);
    if (!sha) throw refused(`Failed to create branch '${branch}': invalid reference name '${ref}'`);
    if (existing.some((other) => other.name.startsWith(`${branch}/`) || branch.startsWith(`${other.name}/`)))
      throw refused(
        `Failed to create branch '${branch}': Branch name conflicts with existing branch hierarchy.`,
      );
    if (HEX_NAME.test(branch))
      throw refused('You cannot create a branch with a 40-character hexadecimal branch name.');
    await this.updateRefs(caller, repository, [{ ref: `${HEADS}${branch}`, oldSha: ZERO_SHA, newSha: sha }], {
      conflictMessage: 'Branch already exists',
    });
    return { repository, branch: await this.read(caller, repository, branch) };
  }

  /** GitLab commits an empty README.md to the default branch of an empty repository before branching. */
  private async createDefaultBranch(caller: Caller, repository: OpenRepository): Promise<void> {
    const { git, view } = repository;
    const user = caller.user!;
    const commit = await git.commitOneFile({
      path: 'README.md',
      content: '',
      message: 'Add README.md',
      author: { name: user.name, email: user.email },
    });
    const branch = view.project.defaultBranch ?? 'main';
    await this.updateRefs(
      caller,
      repository,
      [{ ref: `${HEADS}${branch}`, oldSha: ZERO_SHA, newSha: commit }],
      {
        conflictMessage: 'Branch already exists',
      },
    );
  }

  async delete(caller: Caller, view: ProjectView, name: string): Promise<void> {
    const repository = this.services.repositories.open(view);
    const ref = await repository.git.branch(name);
    if (!ref) throw branchNotFound();
    if (name === repository.view.project.defaultBranch)
      throw refused('The default branch of a project cannot be deleted.');
    await this.updateRefs(caller, repository, [
      { ref: `${HEADS}${name}`, oldSha: ref.sha, newSha: ZERO_SHA },
    ]);
  }

  /** Deletes what the default branch contains, except the default branch and protected branches. */
  async deleteMerged(caller: Caller, view: ProjectView): Promise<void> {
    const repository = this.services.repositories.open(view);
    const { git } = repository;
    const defaultBranch = view.project.defaultBranch;
    const defaultHead = defaultBranch ? await git.branch(defaultBranch) : null;
    if (!defaultHead) return;
    const rules = await this.branchRules(caller, repository);
    const changes: RefChange[] = [];
    for (const { ref, sha } of await git.mergedBranches(defaultHead.sha)) {
      const name = ref.slice(HEADS.length);
      if (name === defaultBranch || sha === defaultHead.sha || rules.matching(name).length > 0) continue;
      changes.push({ ref, oldSha: sha, newSha: ZERO_SHA });
    }
    if (changes.length === 0) return;
    try {
      await this.services.repositories.updateRefs(caller, repository, changes);
    } catch (err) {
      if (!(err instanceof RefUpdateRefused)) throw err;
      // One branch moved meanwhile: delete the others one by one and leave it.
      for (const change of changes) {
        await this.services.repositories.updateRefs(caller, repository, [change]).catch((error: unknown) => {
          if (!(error instanceof RefUpdateRefused)) throw error;
        });
      }
    }
  }

  /** Ref changes through the push rules: a refusal is 400 with GitLab's reason, a lost race 409. */
  private async updateRefs(
    caller: Caller,
    repository: OpenRepository,
    changes: RefChange[],
    options: { conflictMessage?: string } = {},
  ): Promise<void> {
    try {
      await this.services.repositories.updateRefs(caller, repository, changes);
    } catch (err) {
      if (!(err instanceof RefUpdateRefused)) throw err;
      if (!err.conflict) throw refused(err.reason);
      throw options.conflictMessage ? refused(options.conflictMessage) : conflict(err.reason);
    }
  }
}
