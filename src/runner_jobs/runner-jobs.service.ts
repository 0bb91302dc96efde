/**
 * The runner-facing job API: `POST /jobs/request` (long-polled, jobs handed out with FOR UPDATE SKIP
 * LOCKED), `PUT /jobs/:id` (a runner's state), `PATCH /jobs/:id/trace` (the live log), and the sweep
 * that fails jobs whose runner went silent.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { RE2JS } from 're2js';
import { hashToken } from '../core/auth.js';
import { ApiError, badParameter } from '../core/errors.js';
import type { CoreDeps } from '../core/family.js';
import type { Events } from '../core/events.js';
import { parseDuration } from '../ci_config/duration.js';
import type { CiVariablesService } from '../ci_variables/ci-variables.service.js';
import type { GitCommit } from '../git/commits.js';
import { refPatternMatches } from '../git/ref-changes.js';
import { Job, Pipeline } from '../pipelines/pipeline.entity.js';
import type { PipelinesService } from '../pipelines/pipelines.service.js';
import { Project } from '../projects/project.entity.js';
import { projectSettings } from '../projects/project-settings.js';
import type { ProjectView } from '../projects/projects.service.js';
import type { RepositoriesService } from '../repository/repositories.service.js';
import { Runner } from '../runners/runner.entity.js';
import type { RunnersService } from '../runners/runners.service.js';
import { newJobToken } from './job-tokens.js';
import { buildPayload } from './payload.js';
import { QueueSignal } from './queue-signal.js';
import type { Traces } from './traces.js';

export interface RunnerJobsDeps {
  runners: RunnersService;
  pipelines: PipelinesService;
  ciVariables: CiVariablesService;
  repositories: RepositoriesService;
}

/** A job for the runner (201), or none (204, with the queue's version). */
export type JobRequestResult =
  | { job: Record<string, unknown>; headers: Record<string, string> }
  | { job: null; headers: Record<string, string> };

export interface RunnerResponse {
  status: 200 | 202;
  headers: Record<string, string>;
}

export interface JobRequestBody {
  token: string;
  system_id?: string;
  last_update?: string;
  info?: Record<string, unknown>;
}

export interface JobUpdateBody {
  token: string;
  state?: string;
  failure_reason?: string;
  exit_code?: number;
  checksum?: string;
  output?: { checksum?: string; bytesize?: number };
}

const forbidden403 = () => new ApiError(403, { message: '403 Forbidden' });
/** How often a runner should send its log while a job runs (`X-GitLab-Trace-Update-Interval`). */
const TRACE_UPDATE_INTERVAL = '60';
const CANDIDATES = 20;

export class RunnerJobsService {
  private readonly dataSource: DataSource;
  private readonly events: Events;
  readonly signal: QueueSignal;
  /** How long `POST /jobs/request` holds a request without a job (GitLab/Workhorse: about 50 s). */
  longPollMs = Number(process.env.FORGE_RUNNER_LONG_POLL_SECONDS ?? 50) * 1000;
  /** How long after its timeout a silent runner's job is failed. */
  stuckGraceMs = 10 * 60 * 1000;

  constructor(
    private readonly core: CoreDeps,
    private readonly deps: RunnerJobsDeps,
    readonly traces: Traces,
  ) {
    this.dataSource = core.dataSource;
    this.events = core.events;
    this.signal = new QueueSignal(core.dataSource);
  }

  // ---- POST /jobs/request ----

  async request(body: JobRequestBody, ip: string): Promise<JobRequestResult> {
    const runner = await this.deps.runners.authenticate(body.token);
    if (!runner) throw forbidden403();
    await this.contacted(runner, body, ip);
    const deadline = Date.now() + this.longPollMs;
    for (;;) {
      const mark = this.signal.mark();
      // A paused runner gets nothing, but is held like any other so that it does not spin.
      const payload = runner.active ? await this.assign(runner) : null;
      if (payload) return { job: payload, headers: {} };
      const left = deadline - Date.now();
      if (left <= 0) return { job: null, headers: { 'X-GitLab-Last-Update': this.signal.lastUpdate } };
      await this.signal.wait(left, mark);
      const fresh = await this.dataSource.manager.findOneBy(Runner, { id: runner.id });
      if (!fresh) throw forbidden403();
      Object.assign(runner, fresh);
    }
  }

  private async contacted(runner: Runner, body: JobRequestBody, ip: string): Promise<void> {
    const info = { ...(body.info ?? {}), ...(body.system_id ? { system_id: body.system_id } : {}) };
    await this.dataSource.query(
      `UPDATE ci_runners SET contacted_at = now(), info = $2::jsonb, ip_address = $3 WHERE id = $1`,
      [runner.id, JSON.stringify(info), ip.slice(0, 64)],
    );
  }

  /**
   * Picks the oldest pending build this runner may run, in one transaction; null: none. The candidates
   * are read without locks, then taken one at a time with FOR UPDATE SKIP LOCKED: a runner locks only
   * the job it takes, and concurrent runners skip it for the next one instead of waiting or failing.
   */
  private async assign(runner: Runner): Promise<Record<string, unknown> | null> {
    // A look without a transaction first: most woken runners find nothing for them and stop here.
    if ((await this.candidates(this.dataSource.manager, runner)).length === 0) return null;
    // Those that may take a job try one after the other in this process: the first takes it at once
    // instead of queueing for connections and the pipeline's lock behind the others.
    const turn = this.assigning.then(() => this.assignWithRetries(runner));
    this.assigning = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  private assigning: Promise<void> = Promise.resolve();

  private async assignWithRetries(runner: Runner): Promise<Record<string, unknown> | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.assignOnce(runner);
      } catch (err) {
        // Two pipelines' processing may still deadlock with us: the loser tries again.
        const code = (err as { driverError?: { code?: string }; code?: string }).driverError?.code;
        if (attempt >= 3 || (code !== '40P01' && code !== '40001')) throw err;
      }
    }
  }

  private async assignOnce(runner: Runner): Promise<Record<string, unknown> | null> {
    return this.dataSource.transaction(async (manager) => {
      for (const { id, pipeline_id } of await this.candidates(manager, runner)) {
        // The pipeline first, as its processing locks it before its jobs.
        await manager.query('SELECT 1 FROM ci_pipelines WHERE id = $1 FOR UPDATE', [pipeline_id]);
        const locked: Array<{ id: number }> = await manager.query(
          `SELECT id FROM ci_builds WHERE id = $1 AND status = 'pending' AND runner_id IS NULL
           FOR UPDATE SKIP LOCKED`,
          [id],
        );
        if (locked.length === 0) continue;
        const job = await manager.findOneByOrFail(Job, { id });
        if (runner.accessLevel === 'ref_protected' && !(await this.protectedRef(manager, job))) continue;
        return this.start(manager, runner, job);
      }
      return null;
    });
  }

  private async candidates(
    manager: EntityManager,
    runner: Runner,
  ): Promise<Array<{ id: number; pipeline_id: number }>> {
    const scope =
      runner.runnerType === 'instance_type'
        ? '$1::integer IS NOT NULL'
        : runner.runnerType === 'group_type'
          ? `j.project_id IN (SELECT p.id FROM projects p JOIN namespaces n ON n.id = p.namespace_id
               WHERE n.traversal_ids && ARRAY(SELECT namespace_id FROM ci_runner_namespaces WHERE runner_id = $1))`
          : 'j.project_id IN (SELECT project_id FROM ci_runner_projects WHERE runner_id = $1)';
    return manager.query(
      `SELECT j.id, j.pipeline_id FROM ci_builds j
       WHERE j.status = 'pending' AND j.type = 'build' AND j.runner_id IS NULL AND ${scope}
         AND COALESCE(j.options->'tags', '[]'::jsonb) <@ $2::jsonb
         AND ($3::boolean OR jsonb_array_length(COALESCE(j.options->'tags', '[]'::jsonb)) > 0)
       ORDER BY j.id LIMIT ${CANDIDATES}`,
      [runner.id, JSON.stringify(runner.tagList), runner.runUntagged],
    );
  }

  /**
   * Whether the job's ref is a protected branch or tag, read in the caller's transaction (PGlite has one
   * session: a read beside an open transaction would wait for it).
   */
  private async protectedRef(manager: EntityManager, job: Job): Promise<boolean> {
    const rows: Array<{ name: string }> = await manager.query(
      `SELECT name FROM ${job.tag ? 'protected_tags' : 'protected_branches'} WHERE project_id = $1`,
      [job.projectId],
    );
    return rows.some((rule) => refPatternMatches(rule.name, job.ref));
  }

  /** The job's timeout: its own `timeout`, else the project's, capped by the runner's maximum. */
  private timeout(job: Job, project: Project, runner: Runner): number {
    const own = parseDuration(job.options.timeout);
    let timeout = own ?? projectSettings(project.settings).build_timeout;
    if (runner.maximumTimeout !== null) timeout = Math.min(timeout, runner.maximumTimeout);
    return Math.max(1, Math.round(timeout));
  }

  private async start(manager: EntityManager, runner: Runner, job: Job): Promise<Record<string, unknown>> {
    const { token, digest } = newJobToken();
    const project = await manager.findOneOrFail(Project, {
      where: { id: job.projectId },
      relations: { namespace: true },
    });
    const timeout = this.timeout(job, project, runner);
    await manager.query(
      `UPDATE ci_builds SET runner_id = $2, token_digest = $3, runner_updated_at = now() WHERE id = $1`,
      [job.id, runner.id, digest],
    );
    const started = await this.deps.pipelines.jobs.updateStatus(job.id, 'running', {}, manager);
    const pipeline = await manager.findOneByOrFail(Pipeline, { id: job.pipelineId });
    const protectedRef = await this.protectedRef(manager, job);
    const view = { project, accessLevel: 0, showStatistics: false } as unknown as ProjectView;
    const commit = await this.commit(view, job.sha);
    const environment = environmentName(job.options.environment);
    const ciVariables = await this.deps.ciVariables.forPipeline(
      { projectId: project.id, protectedRef, environment },
      manager,
    );
    // The sweep looks again once the job's time is up.
    await this.events.publish(
      manager,
      'ci.runner_job_deadline',
      { jobId: job.id },
      { startAfter: new Date(Date.now() + timeout * 1000 + this.stuckGraceMs) },
    );
    return buildPayload({
      manager,
      job: started,
      pipeline,
      project: project as Project & { namespace: NonNullable<Project['namespace']> },
      runner,
      token,
      timeout,
      protectedRef,
      commit,
      externalUrl: this.core.config.externalUrl,
      ciVariables,
      openSealed: (value) => this.deps.pipelines.secrets.open(value),
      playVariables: this.deps.pipelines.jobs.playVariables(job),
      contributions: this.core.contributions,
    });
  }

  /** A commit is what it is forever: the jobs of a pipeline read it once (a git process saved per job). */
  private readonly commits = new Map<string, GitCommit | null>();

  private async commit(view: ProjectView, sha: string): Promise<GitCommit | null> {
    const key = `${view.project.id}:${sha}`;
    if (this.commits.has(key)) return this.commits.get(key) ?? null;
    const commit = await this.deps.repositories
      .open(view)
      .git.commits([sha])
      .then((map) => map.get(sha) ?? null)
      .catch(() => null);
    if (this.commits.size >= 1000) this.commits.delete(this.commits.keys().next().value!);
    if (commit) this.commits.set(key, commit);
    return commit;
  }

  // ---- PUT /jobs/:id ----

  /** The job a runner's token stands for: 403 unless it is this running job's. */
  private async runningJob(jobId: number, token: string | undefined): Promise<Job> {
    if (!token) throw forbidden403();
    const job = await this.dataSource.manager.findOneBy(Job, { id: jobId, type: 'build' });
    if (!job) throw new ApiError(404, { message: '404 Not Found' });
    const rows: Array<{ token_digest: string | null }> = await this.dataSource.query(
      'SELECT token_digest FROM ci_builds WHERE id = $1',
      [jobId],
    );
    if (rows[0]?.token_digest !== hashToken(token)) throw forbidden403();
    if (job.status !== 'running')
      throw new ApiError(
        403,
        { message: '403 Forbidden - Job is not processing on runner' },
        { 'Job-Status': job.status },
      );
    return job;
  }

  async update(jobId: number, body: JobUpdateBody): Promise<RunnerResponse> {
    const job = await this.runningJob(jobId, body.token);
    await this.dataSource.query('UPDATE ci_builds SET runner_updated_at = now() WHERE id = $1', [jobId]);
    const state = body.state;
    if (state === undefined || state === 'running')
      return { status: 200, headers: { 'Job-Status': job.status, ...this.interval() } };
    if (state !== 'success' && state !== 'failed') throw badParameter('state does not have a valid value');
    const size = await this.traces.size(jobId);
    const bytesize = body.output?.bytesize;
    // The runner still has log to send: it retries once it has.
    if (bytesize !== undefined && bytesize > size)
      return { status: 202, headers: { 'Job-Status': job.status, ...this.interval() } };
    if (bytesize !== undefined && bytesize < size)
      throw new ApiError(412, { message: '412 Precondition Failed' }, { 'Job-Status': job.status });
    const coverage = await this.coverage(job);
    const finished = await this.deps.pipelines.jobs.updateStatus(jobId, state, {
      ...(body.exit_code !== undefined ? { exitCode: body.exit_code } : {}),
      ...(state === 'failed' ? { failureReason: body.failure_reason ?? 'script_failure' } : {}),
      ...(coverage !== null ? { coverage } : {}),
    });
    await this.finished(jobId);
    return { status: 200, headers: { 'Job-Status': finished.status } };
  }

  private interval() {
    return { 'X-GitLab-Trace-Update-Interval': TRACE_UPDATE_INTERVAL };
  }

  /** A job's coverage: the last line of its log its `coverage` regex matches, the first number in the match. */
  private async coverage(job: Job): Promise<number | null> {
    const source = job.options.coverage;
    if (typeof source !== 'string' || !source.startsWith('/') || !source.endsWith('/')) return null;
    let pattern: RE2JS;
    try {
      pattern = RE2JS.compile(source.slice(1, -1));
    } catch {
      return null;
    }
    const trace = (await this.traces.read(job))?.toString('utf8') ?? job.trace ?? '';
    const lines = trace.split('\n');
    for (let i = lines.length - 1; i >= 0; i--) {
      const matcher = pattern.matcher(lines[i]);
      if (!matcher.find()) continue;
      const number = /\d+(?:\.\d+)?/.exec(matcher.group(0) ?? '');
      if (number) return Math.min(100, Number(number[0]));
    }
    return null;
  }

  /** After a job ends: its token no longer works, and its log moves to the object store. */
  private async finished(jobId: number): Promise<void> {
    await this.dataSource.query('UPDATE ci_builds SET token_digest = NULL WHERE id = $1', [jobId]);
    await this.traces.archive(jobId);
  }

  // ---- PATCH /jobs/:id/trace ----

  async appendTrace(
    jobId: number,
    reachJobId: number,
    contentRange: string | undefined,
    read: () => Promise<Buffer>,
  ): Promise<Record<string, string>> {
    // The token resolved to this running job: no need to read it again.
    if (reachJobId !== jobId) throw forbidden403();
    const status = 'running';
    const range = /^(\d+)-(\d+)$/.exec(contentRange?.trim() ?? '');
    if (!range) throw badParameter('Content-Range header is missing or invalid');
    const start = Number(range[1]);
    const data = await read();
    const result = await this.traces.append(jobId, start, data);
    if (typeof result === 'object')
      throw new ApiError(
        416,
        { message: '416 Range Not Satisfiable' },
        { Range: `0-${result.resumeAt}`, 'Job-Status': status },
      );
    return { Range: `0-${result}`, 'Job-Status': status, ...this.interval() };
  }

  // ---- stuck jobs ----

  /**
   * A running job whose time is up: failed with `runner_system_failure` when its runner has sent nothing
   * for the grace period; looked at again later otherwise.
   */
  async sweep(jobId: number, now = new Date()): Promise<void> {
    const job = await this.dataSource.manager.findOneBy(Job, { id: jobId });
    if (!job || job.status !== 'running' || job.runnerId === null) return;
    const rows: Array<{ runner_updated_at: Date | null }> = await this.dataSource.query(
      'SELECT runner_updated_at FROM ci_builds WHERE id = $1',
      [jobId],
    );
    const last = rows[0]?.runner_updated_at ? new Date(rows[0].runner_updated_at).getTime() : 0;
    const silentSince = now.getTime() - last;
    if (silentSince < this.stuckGraceMs) {
      await this.dataSource.transaction((manager) =>
        this.events.publish(
          manager,
          'ci.runner_job_deadline',
          { jobId },
          { startAfter: new Date(last + this.stuckGraceMs + 1000) },
        ),
      );
      return;
    }
    await this.deps.pipelines.jobs
      .updateStatus(jobId, 'failed', { failureReason: 'runner_system_failure' })
      .catch((err: unknown) => {
        // Finished meanwhile: nothing to do.
        if (!(err instanceof ApiError)) throw err;
      });
    await this.finished(jobId);
  }

  async publishEnded(manager: EntityManager, jobId: number): Promise<void> {
    await manager.query('UPDATE ci_builds SET token_digest = NULL WHERE id = $1', [jobId]);
    await this.events.publish(manager, 'ci.runner_job_ended', { jobId });
  }

  /** Jobs that ended otherwise than by their runner (canceled, swept): their token stops and log archives. */
  async afterEnded(jobId: number): Promise<void> {
    await this.finished(jobId);
  }
}

function environmentName(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { name?: unknown }).name === 'string')
    return (value as { name: string }).name;
  return null;
}
