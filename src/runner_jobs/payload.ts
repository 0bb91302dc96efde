/**
 * The job GitLab hands a runner (`POST /jobs/request` 201): GitLab's `Ci::BuildRunnerPresenter` and
 * `API::Entities::Ci::JobRequest::Response`, field by field as GitLab Runner's `JobResponse` reads them.
 */
import type { EntityManager } from 'typeorm';
import type { Contributions } from '../core/family.js';
import type { GitCommit } from '../git/commits.js';
import type { Namespace } from '../namespaces/namespace.entity.js';
import { Job, Pipeline, PipelineVariable } from '../pipelines/pipeline.entity.js';
import { predefinedVariables, projectFullPath } from '../pipelines/predefined-variables.js';
import type { Project } from '../projects/project.entity.js';
import type { Runner } from '../runners/runner.entity.js';
import { User } from '../users/user.entity.js';
import type { RunnerVariable } from './contracts.js';

export interface PayloadInput {
  manager: EntityManager;
  job: Job;
  pipeline: Pipeline;
  project: Project & { namespace: Namespace };
  runner: Runner;
  token: string;
  timeout: number;
  protectedRef: boolean;
  commit: GitCommit | null;
  externalUrl: string;
  /** Instance, group and project variables (lowest first), opened. */
  ciVariables: Array<{ key: string; value: string; variable_type: string; raw: boolean; masked: boolean }>;
  openSealed(value: string): string;
  playVariables: Array<{ key: string; value: string }>;
  contributions: Contributions;
}

const variable = (key: string, value: string, extra: Partial<RunnerVariable> = {}): RunnerVariable => ({
  key,
  value,
  public: true,
  masked: false,
  ...extra,
});

/** Every variable of the job, lowest precedence first: the runner keeps the last of each key. */
export async function jobVariables(input: PayloadInput, dependencies: Job[]): Promise<RunnerVariable[]> {
  const { job, pipeline, project, runner, externalUrl } = input;
  const user = job.userId ? await input.manager.findOneBy(User, { id: job.userId }) : null;
  const fullPath = projectFullPath(project);
  const host = new URL(externalUrl);
  const predefined = predefinedVariables({
    externalUrl,
    project,
    ref: job.ref,
    tag: job.tag,
    sha: job.sha,
    beforeSha: pipeline.beforeSha,
    commit: input.commit,
    source: pipeline.source,
    user,
    protectedRef: input.protectedRef,
  });
  const out: RunnerVariable[] = [
    variable('CI_JOB_TOKEN', input.token, { public: false, masked: true }),
    ...Object.entries(predefined).map(([key, value]) => variable(key, value)),
    variable('CI_API_V4_URL', `${externalUrl}/api/v4`),
    variable('CI_API_GRAPHQL_URL', `${externalUrl}/api/graphql`),
    variable('CI_SERVER_PORT', host.port || (host.protocol === 'https:' ? '443' : '80')),
    variable('CI_SERVER_NAME', 'GitLab'),
    variable('CI_JOB_ID', String(job.id)),
    variable('CI_JOB_NAME', job.name),
    variable(
      'CI_JOB_NAME_SLUG',
      job.name
        .toLowerCase()
        .replace(/[^a-z0-9]/g, '-')
        .slice(0, 63),
    ),
    variable('CI_JOB_STAGE', job.stage),
    variable('CI_JOB_URL', `${externalUrl}/${fullPath}/-/jobs/${job.id}`),
    variable('CI_JOB_STARTED_AT', (job.startedAt ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z')),
    variable('CI_JOB_TIMEOUT', String(input.timeout)),
    variable('CI_PIPELINE_ID', String(pipeline.id)),
    variable('CI_PIPELINE_IID', String(pipeline.iid)),
    variable('CI_PIPELINE_URL', `${externalUrl}/${fullPath}/-/pipelines/${pipeline.id}`),
    variable('CI_PIPELINE_CREATED_AT', pipeline.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z')),
    variable('CI_REPOSITORY_URL', repoUrl(externalUrl, fullPath, input.token), { public: false }),
    variable('CI_RUNNER_ID', String(runner.id)),
    variable('CI_RUNNER_DESCRIPTION', runner.description ?? ''),
    variable('CI_RUNNER_TAGS', JSON.stringify(runner.tagList)),
    variable('CI_NODE_TOTAL', String(nodeTotal(job))),
    variable('CI_DEPENDENCY_PROXY_USER', 'gitlab-ci-token'),
    variable('CI_DEPENDENCY_PROXY_PASSWORD', input.token, { public: false, masked: true }),
    variable('CI_REGISTRY_USER', 'gitlab-ci-token'),
    variable('CI_REGISTRY_PASSWORD', input.token, { public: false, masked: true }),
  ];
  const parallel = /^(.*) (\d+)\/(\d+)$/.exec(job.name);
  if (parallel) out.push(variable('CI_NODE_INDEX', parallel[2]));
  for (const [key, value] of Object.entries(job.yamlVariables ?? {})) out.push(variable(key, String(value)));
  for (const extension of input.contributions.of('runnerJobPayload'))
    if (extension.variables) out.push(...(await extension.variables(input.manager, job, dependencies)));
  for (const v of input.ciVariables)
    out.push(
      variable(v.key, v.value, {
        public: false,
        masked: v.masked,
        ...(v.variable_type === 'file' ? { file: true } : {}),
        ...(v.raw ? { raw: true } : {}),
      }),
    );
  const pipelineVars = await input.manager.find(PipelineVariable, {
    where: { pipelineId: pipeline.id },
    order: { id: 'ASC' },
  });
  for (const v of pipelineVars)
    out.push(
      variable(v.key, input.openSealed(v.encryptedValue), {
        public: false,
        ...(v.variableType === 'file' ? { file: true } : {}),
        ...(v.raw ? { raw: true } : {}),
      }),
    );
  for (const v of input.playVariables) out.push(variable(v.key, v.value, { public: false }));
  return out;
}

function nodeTotal(job: Job): number {
  const parallel = /^(.*) (\d+)\/(\d+)$/.exec(job.name);
  return parallel ? Number(parallel[3]) : 1;
}

export function repoUrl(externalUrl: string, fullPath: string, token: string): string {
  const url = new URL(`${externalUrl}/${fullPath}.git`);
  url.username = 'gitlab-ci-token';
  url.password = token;
  return url.toString();
}

const asArray = (value: unknown): string[] =>
  value === undefined || value === null ? [] : ([] as unknown[]).concat(value).map(String);

/** `steps`: `script` (before_script + script) and `after_script`, as GitLab's presenter makes them. */
function steps(job: Job, timeout: number) {
  const o = job.options;
  const list: Array<Record<string, unknown>> = [
    {
      name: 'script',
      script: [...asArray(o.before_script), ...asArray(o.script)],
      timeout,
      when: 'on_success',
      allow_failure: false,
    },
  ];
  const after = asArray(o.after_script);
  if (after.length)
    list.push({ name: 'after_script', script: after, timeout, when: 'always', allow_failure: true });
  return list;
}

const REPORT_FORMATS: Record<string, string> = {
  junit: 'gzip',
  dotenv: 'gzip',
  cobertura: 'gzip',
  coverage_report: 'gzip',
  metrics: 'gzip',
  terraform: 'raw',
};

/** `artifacts`: the archive, then one entry per report, as GitLab's presenter lists them. */
function artifacts(job: Job): Array<Record<string, unknown>> {
  const a = job.options.artifacts as Record<string, unknown> | undefined;
  if (!a) return [];
  const out: Array<Record<string, unknown>> = [];
  const paths = asArray(a.paths);
  if (paths.length || a.untracked === true)
    out.push({
      name: typeof a.name === 'string' ? a.name : 'artifacts',
      untracked: a.untracked === true,
      paths,
      exclude: asArray(a.exclude),
      when: typeof a.when === 'string' ? a.when : 'on_success',
      expire_in: typeof a.expire_in === 'string' ? a.expire_in : null,
      artifact_type: 'archive',
      artifact_format: 'zip',
    });
  const reports = (a.reports ?? {}) as Record<string, unknown>;
  for (const [type, value] of Object.entries(reports)) {
    if (type === 'coverage_report') {
      const report = value as { coverage_format?: string; path?: string };
      out.push({
        name: `${report.coverage_format ?? 'cobertura'}.xml.gz`,
        untracked: false,
        paths: asArray(report.path),
        when: 'always',
        expire_in: a.expire_in ?? null,
        artifact_type: report.coverage_format ?? 'cobertura',
        artifact_format: 'gzip',
      });
      continue;
    }
    const format = REPORT_FORMATS[type] ?? 'raw';
    out.push({
      name: format === 'gzip' ? `${type}.gz` : `gl-${type.replace(/_/g, '-')}-report.json`,
      untracked: false,
      paths: asArray(value),
      when: 'always',
      expire_in: a.expire_in ?? null,
      artifact_type: type,
      artifact_format: format,
    });
  }
  return out;
}

function image(value: unknown): Record<string, unknown> | null {
  if (!value) return null;
  const v = (typeof value === 'string' ? { name: value } : value) as Record<string, unknown>;
  return {
    name: v.name,
    alias: v.alias ?? null,
    entrypoint: v.entrypoint ?? null,
    ports: v.ports ?? [],
    pull_policy: v.pull_policy ? asArray(v.pull_policy) : null,
  };
}

function caches(job: Job): Array<Record<string, unknown>> {
  const list = (job.options.cache ?? []) as Array<Record<string, unknown>>;
  return list.map((c) => {
    const key = c.key;
    const name =
      key && typeof key === 'object'
        ? [(key as { prefix?: string }).prefix, 'default'].filter(Boolean).join('-')
        : String(key ?? 'default');
    return {
      key: name,
      untracked: c.untracked === true,
      paths: asArray(c.paths),
      policy: c.policy ?? 'pull-push',
      when: c.when ?? 'on_success',
      fallback_keys: asArray(c.fallback_keys),
    };
  });
}

/** The jobs whose artifacts this job downloads: `dependencies`, else its `needs` with artifacts, else earlier stages. */
export async function dependenciesOf(manager: EntityManager, job: Job): Promise<Job[]> {
  const builds = await manager.find(Job, {
    where: { pipelineId: job.pipelineId, retried: false, type: 'build' },
    order: { id: 'ASC' },
  });
  const earlier = builds.filter((other) => other.stageIdx < job.stageIdx);
  const names = job.options.dependencies as string[] | undefined;
  const baseName = (name: string) => name.replace(/ \d+\/\d+$/, '').replace(/: \[.*\]$/, '');
  if (names !== undefined)
    return builds.filter((other) => names.includes(other.name) || names.includes(baseName(other.name)));
  if (job.needs !== null) {
    const wanted = job.needs.filter((need) => need.artifacts && !need.pipeline && !need.project);
    return builds.filter((other) =>
      wanted.some((need) => need.name === other.name || need.name === baseName(other.name)),
    );
  }
  return earlier;
}

export async function buildPayload(input: PayloadInput): Promise<Record<string, unknown>> {
  const { job, pipeline, project, externalUrl, manager } = input;
  const fullPath = projectFullPath(project);
  const deps = await dependenciesOf(manager, job);
  const extensions = input.contributions.of('runnerJobPayload');
  const dependencies = [];
  for (const dep of deps) {
    let file: { filename: string; size: number } | null = null;
    for (const extension of extensions)
      if (extension.artifactsFile) file = file ?? (await extension.artifactsFile(manager, dep));
    dependencies.push({
      id: dep.id,
      name: dep.name,
      token: input.token,
      ...(file ? { artifacts_file: file } : {}),
    });
  }
  const o = job.options;
  return {
    id: job.id,
    token: input.token,
    allow_git_fetch: true,
    job_info: {
      id: job.id,
      name: job.name,
      stage: job.stage,
      project_id: project.id,
      project_name: project.name,
      time_in_queue_seconds: job.queuedAt ? Math.max(0, (Date.now() - job.queuedAt.getTime()) / 1000) : 0,
      project_jobs_running_on_instance_runners_count: '+Inf',
      queue_size: 0,
      queue_depth: 0,
    },
    git_info: {
      repo_url: repoUrl(externalUrl, fullPath, input.token),
      repo_object_format: 'sha1',
      ref: job.ref,
      sha: job.sha,
      before_sha: pipeline.beforeSha,
      ref_type: job.tag ? 'tag' : 'branch',
      refspecs: [
        `+refs/pipelines/${pipeline.id}:refs/pipelines/${pipeline.id}`,
        job.tag
          ? `+refs/tags/${job.ref}:refs/tags/${job.ref}`
          : `+refs/heads/${job.ref}:refs/remotes/origin/${job.ref}`,
      ],
      depth: numberSetting(project, 'ci_default_git_depth', 20),
    },
    runner_info: { timeout: input.timeout, runner_session_url: null },
    variables: await jobVariables(input, deps),
    steps: steps(job, input.timeout),
    image: image(o.image),
    services: ((o.services ?? []) as unknown[]).map((s) => image(s)),
    artifacts: artifacts(job),
    cache: caches(job),
    credentials: [
      {
        type: 'registry',
        url: new URL(externalUrl).host,
        username: 'gitlab-ci-token',
        password: input.token,
      },
    ],
    dependencies,
    features: { trace_sections: true, failure_reasons: FAILURE_REASONS },
    hooks: [],
  };
}

function numberSetting(project: Project, key: string, fallback: number): number {
  const value = (project.settings as Record<string, unknown>)[key];
  return typeof value === 'number' ? value : fallback;
}

/** The failure reasons a runner may report (GitLab's `Ci::Build` failure reasons runners know). */
export const FAILURE_REASONS = [
  'unknown_failure',
  'script_failure',
  'api_failure',
  'stuck_or_timeout_failure',
  'runner_system_failure',
  'missing_dependency_failure',
  'runner_unsupported',
  'stale_schedule',
  'job_execution_timeout',
  'archived_failure',
  'unmet_prerequisites',
  'scheduler_failure',
  'data_integrity_failure',
  'forward_deployment_failure',
  'user_blocked',
  'project_deleted',
  'insufficient_bridge_permissions',
  'downstream_bridge_project_not_found',
  'invalid_bridge_trigger',
  'bridge_pipeline_is_child_pipeline',
  'downstream_pipeline_creation_failed',
  'secrets_provider_not_found',
  'reached_max_descendant_pipelines_depth',
  'ip_restriction_failure',
  'reached_max_pipeline_hierarchy_size',
  'reached_downstream_pipeline_trigger_rate_limit',
  'job_router_failure',
  'image_pull_failure',
];
