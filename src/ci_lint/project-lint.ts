/**
 * A project's CI lint (GitLab's Gitlab::Ci::Lint): a static check of a configuration in the project's
 * context, or a dry run planning the pipeline a push to a ref would get, with the ref's predefined and
 * the project's CI/CD variables, as pipeline creation reads them. Writes nothing.
 */
import type { Caller } from '../core/auth.js';
import { notFound } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import { ZERO_SHA } from '../git/ref-changes.js';
import type { GitRepository } from '../git/repository.js';
import { globToRegExp, includeSources, readFileAt } from '../pipelines/include-sources.js';
import { predefinedVariables, projectFullPath } from '../pipelines/predefined-variables.js';
import type { ProjectView } from '../projects/projects.service.js';
import { loadConfig, planPipeline, type RuleContext } from '../ci_config/index.js';
import { lintResult, type LintResult } from './lint-result.js';
import { plannedJobs, staticJobs } from './lint-jobs.js';

export const CONFIG_PATH = '.gitlab-ci.yml';
/** GitLab's words when rules leave a simulated pipeline without jobs. */
const NO_JOBS =
  'Pipeline will not run for the selected trigger. The rules configuration prevented any jobs from being added to the pipeline.';

type Deps = Pick<
  ServiceRegistry,
  'projects' | 'repositories' | 'protectedRefs' | 'ciVariables' | 'planLimits'
>;

export class ProjectLint {
  private readonly externalUrl: string;
  private readonly allowLocalRequests: boolean;

  constructor(
    core: CoreDeps,
    private readonly deps: Deps,
  ) {
    this.externalUrl = core.config.externalUrl;
    this.allowLocalRequests = core.config.allowLocalRequests;
  }

  /** GET: the project's configuration file at `contentRef` (the default branch's head by default). */
  async lintFile(
    caller: Caller,
    view: ProjectView,
    options: { contentRef?: string; dryRun: boolean; dryRunRef?: string },
  ): Promise<LintResult> {
    const git = this.deps.repositories.open(view).git;
    const branch = view.project.defaultBranch;
    const head = branch ? await git.resolveCommit(`refs/heads/${branch}`) : null;
    if (!head) throw notFound('Repository');
    const sha = options.contentRef ? await git.resolveCommit(options.contentRef) : head;
    if (!sha) throw notFound('Commit');
    const content = (await readFileAt(git, sha, CONFIG_PATH)) ?? '';
    return this.lint(caller, view, content, { dryRun: options.dryRun, ref: options.dryRunRef, sha });
  }

  /** POST: the given content, statically at the default branch's head (or `sha`), or as a dry run on `ref`. */
  async lint(
    caller: Caller,
    view: ProjectView,
    content: string,
    options: { dryRun: boolean; ref?: string; sha?: string },
  ): Promise<LintResult> {
    const git = this.deps.repositories.open(view).git;
    const branch = view.project.defaultBranch;
    if (options.dryRun) return this.dryRun(caller, view, git, content, options.ref ?? branch ?? 'main');
    const sha = options.sha ?? (branch ? await git.resolveCommit(`refs/heads/${branch}`) : null) ?? ZERO_SHA;
    const config = await loadConfig({
      content,
      sources: this.sources(caller, git, sha),
      projectPath: projectFullPath(view.project),
      sha,
      exists: (globs) => this.exists(git, sha, globs),
    });
    return lintResult(config, config.errors.length ? [] : staticJobs(config));
  }

  private async dryRun(caller: Caller, view: ProjectView, git: GitRepository, content: string, ref: string) {
    const { project } = view;
    const branchSha = await git.resolveCommit(`refs/heads/${ref}`);
    const tagSha = branchSha ? null : await git.resolveCommit(`refs/tags/${ref}`);
    const sha = branchSha ?? tagSha;
    if (!sha) return failure(['Reference not found']);
    const tag = branchSha === null;
    const protectedRef = !tag && (await this.deps.protectedRefs.isProtectedBranch(project.id, ref));
    const variables = predefinedVariables({
      externalUrl: this.externalUrl,
      project,
      ref,
      tag,
      sha,
      beforeSha: ZERO_SHA,
      commit: await git.commit(sha),
      source: 'push',
      user: caller.user,
      protectedRef,
    });
    for (const v of await this.deps.ciVariables.forPipeline({ projectId: project.id, protectedRef }))
      variables[v.key] = v.value;
    const exists = (globs: string[]) => this.exists(git, sha, globs);
    const config = await loadConfig({
      content,
      sources: this.sources(caller, git, sha),
      projectPath: projectFullPath(project),
      sha,
      variables,
      exists,
    });
    if (config.errors.length) return lintResult(config, []);
    // The plan's needs limit, as pipeline creation checks it.
    const needsLimit = Number((await this.deps.planLimits.current()).ci_needs_size_limit) || undefined;
    const context: RuleContext = {
      variables,
      ref,
      tag,
      source: 'push',
      changedPaths: () => Promise.resolve(null),
      exists,
      needsLimit,
    };
    const plan = await planPipeline(config, context);
    if (!plan.ok) return lintResult(config, [], plan.skipped ? [plan.reason] : plan.errors);
    if (plan.jobs.length === 0) return lintResult(config, [], [NO_JOBS]);
    const result = lintResult(config, plannedJobs(plan.jobs, plan.stages));
    return { ...result, warnings: [...result.warnings, ...plan.warnings] };
  }

  private sources(caller: Caller, git: GitRepository, sha: string) {
    return includeSources({
      caller,
      git,
      sha,
      projects: this.deps.projects,
      repositories: this.deps.repositories,
      allowLocalRequests: this.allowLocalRequests,
    });
  }

  /** `rules:exists`: whether a file matching one of the globs is in the commit's tree. */
  private async exists(git: GitRepository, sha: string, globs: string[]): Promise<boolean> {
    if (sha === ZERO_SHA) return false;
    const entries = await git.tree(await git.treeOf(sha), '', true);
    const paths = entries.filter((entry) => entry.type === 'blob').map((entry) => entry.path);
    return globs.some((glob) => {
      const pattern = globToRegExp(glob);
      return paths.some((path) => pattern.test(path));
    });
  }
}

const failure = (errors: string[]): LintResult => ({
  valid: false,
  errors,
  warnings: [],
  mergedYaml: null,
  includes: [],
  jobs: [],
});
