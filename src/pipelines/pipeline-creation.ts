/**
 * Creating a pipeline (GitLab's Ci::CreatePipelineService): the configuration at the commit, its
 * includes and rules, the plan limits, then the pipeline, its variables, stages and jobs written in one
 * transaction with bulk inserts, and its processing enqueued in that same transaction.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../core/auth.js';
import type { Events } from '../core/events.js';
import type { ServiceRegistry } from '../core/family.js';
import { nextInternalId } from '../db/internal-ids.js';
import { ZERO_SHA } from '../git/ref-changes.js';
import type { GitRepository } from '../git/repository.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { SecretBox } from '../remote_mirrors/secret-box.js';
import type { User } from '../users/user.entity.js';
import type { LoadedConfig, PlannedJob, RuleContext } from '../ci_config/types.js';
import { ciConfig, type CiSettings } from './adapters.js';
import { globToRegExp, includeSources, readFileAt } from './include-sources.js';
import { Job, Pipeline, PipelineStage, PipelineVariable, type PipelineSource } from './pipeline.entity.js';
import './pipelines.events.js';
import type { PipelineProcessing } from './pipeline-processing.js';
import { predefinedVariables, skipsCi, type MergeRequestInfo } from './predefined-variables.js';

export const CONFIG_PATH = '.gitlab-ci.yml';
const NO_JOBS =
  'Pipeline will not run for the selected trigger. The rules configuration prevented any jobs from being added to the pipeline.';

export interface CreatePipelineInput {
  project: ProjectView;
  ref: string;
  /** The commit; the ref's head when absent. */
  sha?: string;
  beforeSha?: string;
  user: User | null;
  source: PipelineSource;
  variables?: Array<{ key: string; value: string; variable_type?: 'env_var' | 'file' }>;
  inputs?: Record<string, unknown>;
  triggerId?: number;
  scheduleId?: number;
  mergeRequest?: MergeRequestInfo;
  /** A child pipeline: its parent and the trigger job that started it. */
  parent?: { pipelineId: number; jobId: number };
  /** A multi-project pipeline: the upstream pipeline and its trigger job. */
  upstream?: { pipelineId: number; jobId: number };
  /** Paths the push or merge request changed; null or absent when unknown. */
  changedPaths?: string[] | null;
  /** Push options (`ci.skip`), when the push passed any. */
  pushOptions?: string[];
  /** The configuration text instead of the project's file (a child pipeline's `trigger: include`). */
  configContent?: string;
  manager?: EntityManager;
}

export type CreatePipelineResult = { pipeline: Pipeline } | { errors: string[] };

/** Sources whose failures are kept as a failed pipeline (no one to answer an error to). */
const KEEPS_FAILED: ReadonlySet<PipelineSource> = new Set([
  'push',
  'schedule',
  'parent_pipeline',
  'pipeline',
]);

type Deps = Pick<ServiceRegistry, 'projects' | 'repositories' | 'protectedRefs'>;

export class PipelineCreation {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: Events,
    private readonly deps: Deps,
    private readonly settings: CiSettings,
    private readonly secrets: SecretBox,
    private readonly options: { readonly externalUrl: string; readonly allowLocalRequests: boolean },
    private readonly processing: PipelineProcessing,
  ) {}

  async create(input: CreatePipelineInput): Promise<CreatePipelineResult> {
    const { project } = input.project;
    const git = this.deps.repositories.open(input.project).git;
    const tag = await isTag(git, input.ref);
    const sha =
      input.sha ?? (await git.resolveCommit(tag ? `refs/tags/${input.ref}` : `refs/heads/${input.ref}`));
    if (!sha) return { errors: ['Reference not found'] };
    const commit = await git.commit(sha);
    if (!commit) return { errors: ['Commit not found'] };
    const base = { input, sha, tag, committedAt: commit.committedDate };
    const skip =
      input.source === 'push' && (skipsCi(commit.message) || (input.pushOptions ?? []).includes('ci.skip'));
    const content = input.configContent ?? (await readFileAt(git, sha, CONFIG_PATH));
    if (content === null) return { errors: ['Missing CI config file'] };
    if (skip) return this.write(base, { status: 'skipped' });
    const protectedRef = !tag && (await this.deps.protectedRefs.isProtectedBranch(project.id, input.ref));
    const variables: Record<string, string> = predefinedVariables({
      externalUrl: this.options.externalUrl,
      project,
      ref: input.ref,
      tag,
      sha,
      beforeSha: input.beforeSha ?? ZERO_SHA,
      commit,
      source: input.source,
      user: input.user,
      protectedRef,
      mergeRequest: input.mergeRequest,
    });
    for (const v of await this.settings.variables(project.id, protectedRef, input.manager))
      variables[v.key] = v.value;
    for (const v of input.variables ?? []) variables[v.key] = v.value;

    const caller: Caller = { user: input.user, token: null };
    const module = ciConfig();
    const limits = await this.settings.limits(input.manager);
    const context = {
      ...this.ruleContext(git, sha, input, tag, variables),
      needsLimit: limits.ci_needs_size_limit || undefined,
    };
    const config = await module.loadConfig({
      content,
      sources: includeSources({
        caller,
        git,
        sha,
        projects: this.deps.projects,
        repositories: this.deps.repositories,
        allowLocalRequests: this.options.allowLocalRequests,
      }),
      projectPath: `${project.namespace.fullPath}/${project.path}`,
      sha,
      inputs: input.inputs,
      variables,
      exists: (globs) => context.exists(globs),
    });
    if (config.errors.length > 0) return this.failed(base, config.errors, 'config_error');
    const plan = await module.planPipeline(config, context);
    if (!plan.ok) return { errors: plan.skipped ? [plan.reason] : plan.errors };
    if (plan.jobs.length === 0) return { errors: [NO_JOBS] };
    const limitError = await this.limitError(plan.jobs, project.id, input.manager);
    if (limitError) return this.failed(base, [limitError.message], limitError.reason);
    return this.write(base, {
      status: 'created',
      config,
      name: plan.name,
      jobs: plan.jobs,
      stages: plan.stages,
      // workflow:rules may override the workflow's auto_cancel.
      autoCancel: (plan as { autoCancel?: Record<string, unknown> }).autoCancel ?? config.workflow.autoCancel,
    });
  }

  private ruleContext(
    git: GitRepository,
    sha: string,
    input: CreatePipelineInput,
    tag: boolean,
    variables: Record<string, string>,
  ): RuleContext {
    let paths: Promise<string[]> | null = null;
    return {
      variables,
      ref: input.ref,
      tag,
      source: input.source,
      changedPaths: () => Promise.resolve(input.changedPaths ?? null),
      async exists(globs) {
        paths ??= git
          .tree(await git.treeOf(sha), '', true)
          .then((entries) => entries.filter((entry) => entry.type === 'blob').map((entry) => entry.path));
        const all = await paths;
        return globs.some((glob) => {
          const pattern = globToRegExp(glob);
          return all.some((path) => pattern.test(path));
        });
      },
    };
  }

  /** GitLab's plan-limit refusals, checked before anything is written. */
  private async limitError(jobs: PlannedJob[], projectId: number, manager?: EntityManager) {
    const limits = await this.settings.limits(manager);
    for (const job of jobs) {
      const needs = job.needs?.length ?? 0;
      if (limits.ci_needs_size_limit > 0 && needs > limits.ci_needs_size_limit)
        return {
          reason: 'config_error',
          message: `${job.name}: one job can only need ${limits.ci_needs_size_limit} others, but you have listed ${needs}. See needs keyword documentation for more details`,
        };
    }
    if (limits.ci_pipeline_size > 0 && jobs.length > limits.ci_pipeline_size)
      return {
        reason: 'size_limit_exceeded',
        message: `The number of jobs has exceeded the limit of ${limits.ci_pipeline_size}. Try splitting the configuration with parent-child-pipelines ${this.options.externalUrl}/help/ci/debugging.md#pipeline-with-many-jobs-fails-to-start`,
      };
    if (limits.ci_active_jobs > 0) {
      const [{ count }] = (await (manager ?? this.dataSource.manager).query(
        `SELECT count(*)::int AS count FROM ci_builds b JOIN ci_pipelines p ON p.id = b.pipeline_id
         WHERE p.project_id = $1 AND p.status IN ('created','waiting_for_resource','preparing','pending','running','scheduled')
           AND p.created_at > now() - interval '24 hours'`,
        [projectId],
      )) as Array<{ count: number }>;
      if (count + jobs.length > limits.ci_active_jobs)
        return {
          reason: 'job_activity_limit_exceeded',
          message: 'Project exceeded the allowed number of jobs in active pipelines. Retry later.',
        };
    }
    return null;
  }

  /** A refusal: a failed pipeline for sources nobody answers to, the errors otherwise. */
  private failed(base: Base, errors: string[], reason: string): Promise<CreatePipelineResult> {
    if (!KEEPS_FAILED.has(base.input.source)) return Promise.resolve({ errors });
    return this.write(base, {
      status: 'failed',
      failureReason: reason,
      yamlErrors: reason === 'config_error' ? errors.join(', ') : null,
    });
  }

  private write(base: Base, what: PipelineContent): Promise<CreatePipelineResult> {
    const run = async (manager: EntityManager) => ({ pipeline: await this.insert(manager, base, what) });
    return base.input.manager ? run(base.input.manager) : this.dataSource.transaction(run);
  }

  private async insert(manager: EntityManager, base: Base, what: PipelineContent): Promise<Pipeline> {
    const { input } = base;
    const projectId = input.project.project.id;
    const now = new Date();
    const done = what.status !== 'created';
    const pipeline = await manager.save(
      manager.create(Pipeline, {
        projectId,
        iid: await nextInternalId(manager, projectId, 'ci_pipelines'),
        ref: input.ref,
        sha: base.sha,
        beforeSha: input.beforeSha ?? ZERO_SHA,
        tag: base.tag,
        source: input.source,
        status: what.status,
        failureReason: what.failureReason ?? null,
        name: what.name ?? null,
        yamlErrors: what.yamlErrors ?? null,
        userId: input.user?.id ?? null,
        mergeRequestId: input.mergeRequest?.id ?? null,
        parentPipelineId: input.parent?.pipelineId ?? null,
        upstreamPipelineId: input.parent?.pipelineId ?? input.upstream?.pipelineId ?? null,
        upstreamJobId: input.parent?.jobId ?? input.upstream?.jobId ?? null,
        triggerId: input.triggerId ?? null,
        scheduleId: input.scheduleId ?? null,
        autoCanceledById: null,
        autoCancelOnNewCommit: stringOrNull(what.autoCancel?.on_new_commit),
        autoCancelOnJobFailure: stringOrNull(what.autoCancel?.on_job_failure),
        startedAt: null,
        finishedAt: done ? now : null,
        committedAt: base.committedAt,
        duration: null,
        queuedDuration: null,
        coverage: null,
        createdAt: now,
        updatedAt: now,
      }),
    );
    if (input.variables?.length)
      await manager.insert(
        PipelineVariable,
        input.variables.map((v) => ({
          pipelineId: pipeline.id,
          key: v.key,
          encryptedValue: this.secrets.seal(v.value),
          variableType: v.variable_type ?? 'env_var',
          raw: false,
        })),
      );
    if (what.jobs) await this.insertJobs(manager, pipeline, what.stages ?? [], what.jobs, input.user, now);
    if (what.status === 'created') {
      // The first pass runs in the creating transaction, so that the first jobs are pending when it
      // commits; the queued pass after the commit finds whatever a concurrent change left to do.
      await this.processing.process(pipeline.id, manager);
      await this.events.publish(manager, 'ci.pipeline_process_requested', { pipelineId: pipeline.id });
      if (!input.parent)
        await this.events.publish(manager, 'ci.auto_cancel_requested', { pipelineId: pipeline.id });
    }
    if (pipeline.upstreamJobId !== null)
      await this.events.publish(manager, 'ci.downstream_status_changed', { pipelineId: pipeline.id });
    return pipeline;
  }

  private async insertJobs(
    manager: EntityManager,
    pipeline: Pipeline,
    stageNames: string[],
    jobs: PlannedJob[],
    user: User | null,
    now: Date,
  ): Promise<void> {
    const used = stageNames.filter((name) => jobs.some((job) => job.stage === name));
    for (const job of jobs) if (!used.includes(job.stage)) used.push(job.stage);
    const stageRows = (
      await manager
        .createQueryBuilder()
        .insert()
        .into(PipelineStage)
        .values(
          used.map((name) => ({
            projectId: pipeline.projectId,
            pipelineId: pipeline.id,
            name,
            position: stagePosition(name, jobs, stageNames),
            status: 'created' as const,
          })),
        )
        .returning(['id', 'name'])
        .execute()
    ).raw as Array<{ id: number; name: string }>;
    const stageIds = new Map(stageRows.map((row) => [row.name, row.id]));
    const groups = await resourceGroupIds(manager, pipeline.projectId, jobs);
    const rows = jobs.map((job) => jobRow(pipeline, job, stageIds.get(job.stage) ?? null, groups, user, now));
    // Bulk inserts: a pipeline of hundreds of jobs costs a few statements, not one per job.
    for (let i = 0; i < rows.length; i += 500)
      await manager
        .createQueryBuilder()
        .insert()
        .into(Job)
        .values(rows.slice(i, i + 500) as never)
        .updateEntity(false)
        .execute();
    // Families that follow jobs (environments) hear of the new ones; most pipelines have none of theirs.
    if (jobs.some((job) => job.options.environment !== undefined))
      await this.processing.announce(manager, await manager.findBy(Job, { pipelineId: pipeline.id }));
  }
}

interface Base {
  input: CreatePipelineInput;
  sha: string;
  tag: boolean;
  committedAt: Date;
}

interface PipelineContent {
  status: 'created' | 'failed' | 'skipped';
  failureReason?: string;
  yamlErrors?: string | null;
  name?: string | null;
  config?: LoadedConfig;
  autoCancel?: Record<string, unknown>;
  stages?: string[];
  jobs?: PlannedJob[];
}

const stringOrNull = (value: unknown) => (typeof value === 'string' ? value : null);

async function isTag(git: GitRepository, ref: string): Promise<boolean> {
  if (await git.resolveCommit(`refs/heads/${ref}`)) return false;
  return (await git.resolveCommit(`refs/tags/${ref}`)) !== null;
}

function stagePosition(name: string, jobs: PlannedJob[], stageNames: string[]): number {
  const index = stageNames.indexOf(name);
  return index >= 0 ? index : (jobs.find((job) => job.stage === name)?.stageIndex ?? stageNames.length);
}

async function resourceGroupIds(
  manager: EntityManager,
  projectId: number,
  jobs: PlannedJob[],
): Promise<Map<string, number>> {
  const keys = [...new Set(jobs.map((job) => job.resourceGroup).filter((key): key is string => !!key))];
  if (keys.length === 0) return new Map();
  const rows = (await manager.query(
    `INSERT INTO ci_resource_groups (project_id, key) SELECT $1, unnest($2::varchar[])
     ON CONFLICT (project_id, key) DO UPDATE SET updated_at = now() RETURNING id, key`,
    [projectId, keys],
  )) as Array<{ id: number; key: string }>;
  return new Map(rows.map((row) => [row.key, row.id]));
}

function jobRow(
  pipeline: Pipeline,
  job: PlannedJob,
  stageId: number | null,
  groups: Map<string, number>,
  user: User | null,
  now: Date,
): Partial<Job> {
  const options: Record<string, unknown> = { ...job.options };
  if (job.trigger) options.trigger = job.trigger;
  if (job.allowFailureExitCodes) options.allow_failure_exit_codes = job.allowFailureExitCodes;
  return {
    type: job.trigger ? 'bridge' : 'build',
    projectId: pipeline.projectId,
    pipelineId: pipeline.id,
    stageId,
    name: job.name,
    stage: job.stage,
    stageIdx: job.stageIndex,
    status: 'created',
    failureReason: null,
    when: job.when,
    startIn: job.startIn ?? null,
    allowFailure: job.allowFailure,
    options,
    yamlVariables: job.yamlVariables ?? job.variables,
    needs: job.needs,
    jobVariables: null,
    resourceGroupId: job.resourceGroup ? (groups.get(job.resourceGroup) ?? null) : null,
    interruptible: job.interruptible,
    retried: false,
    userId: user?.id ?? null,
    ref: pipeline.ref,
    tag: pipeline.tag,
    sha: pipeline.sha,
    createdAt: now,
    updatedAt: now,
  };
}
