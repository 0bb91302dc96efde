/**
 * One job on the shell executor, in GitLab Runner's stages: prepare, get sources (git, with the job
 * token), restore cache, download the dependencies' artifacts, step_script (before_script + script in one
 * bash), after_script (its own bash), save cache, upload artifacts and reports, clean up. Output goes
 * to the trace (masked); the end is reported with PUT /jobs/:id.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunnerClient } from './client.js';
import { RUNNER_VERSION } from './client.js';
import { restoreCaches, saveCaches } from './cache.js';
import { downloadDependencies, uploadArtifacts } from './artifacts.js';
import type { JobPayload, JobStep } from './payload.js';
import { runProcess, type JobUser, type RunningProcess } from './proc.js';
import { ANSI, error, goDuration, notice, sectionEnd, sectionStart, stepScript, warning } from './shell.js';
import { getSources } from './source.js';
import type { JobContext } from './context.js';
import { JobTrace, type RemoteSignal } from './trace.js';
import {
  afterJobVariables,
  expandAll,
  inheritedEnvironment,
  jobEnvironment,
  runnerVariables,
  type Variable,
} from './variables.js';

export interface JobSettings {
  client: RunnerClient;
  buildsDir: string;
  cacheDir: string;
  user?: JobUser;
  concurrentId: number;
  description: string;
  intervalMs: number;
  log: (message: string) => void;
}

/** Why a job ended other than by its script's success. */
export type JobEnd =
  { state: 'success' } | { state: 'failed'; reason: string; exitCode?: number; message: string };

/** The runner token's first 8 characters after its `glrt-` prefix, as GitLab Runner shows it. */
const shortToken = (token: string) => token.replace(/^glrt-/, '').slice(0, 8);

/** GitLab's default after_script timeout (5 minutes), used when the step names none. */
const AFTER_SCRIPT_TIMEOUT_S = 300;

export class JobRun {
  readonly trace: JobTrace;
  private current: RunningProcess | undefined;
  private canceled = false;
  private aborted = false;
  private timedOut = false;

  constructor(
    readonly job: JobPayload,
    private readonly settings: JobSettings,
  ) {
    const masked = (job.variables ?? []).filter((v) => v.masked).map((v) => v.value);
    masked.push(job.token);
    this.trace = new JobTrace({
      client: settings.client,
      jobId: job.id,
      jobToken: job.token,
      masked,
      intervalMs: settings.intervalMs,
      onRemote: (signal) => this.remote(signal),
      log: settings.log,
    });
  }

  private remote(signal: RemoteSignal): void {
    if (signal === 'cancel') this.canceled = true;
    else this.aborted = true;
    this.settings.log(`job ${this.job.id}: ${signal === 'cancel' ? 'canceled' : 'aborted'} by the server`);
    this.current?.kill();
  }

  /** Ends the job from the runner's side (shutdown): its processes die, it fails as a system failure. */
  abort(): void {
    this.aborted = true;
    this.current?.kill(500);
  }

  private get stopped(): boolean {
    return this.canceled || this.aborted || this.timedOut;
  }

  async run(): Promise<void> {
    const job = this.job;
    this.trace.start();
    const timeoutS = job.runner_info?.timeout && job.runner_info.timeout > 0 ? job.runner_info.timeout : 3600;
    const timer = setTimeout(() => {
      this.timedOut = true;
      this.current?.kill();
    }, timeoutS * 1000);
    let root: string | undefined;
    let end: JobEnd;
    try {
      root = await fs.promises.mkdtemp(path.join(this.settings.buildsDir, `job-${job.id}-`));
      end = await this.stages(root, timeoutS);
    } catch (err) {
      end = { state: 'failed', reason: 'runner_system_failure', message: `${(err as Error).message}` };
    } finally {
      clearTimeout(timer);
    }
    if (root) {
      this.trace.write(
        sectionStart('cleanup_file_variables', 'Cleaning up project directory and file based variables'),
      );
      await fs.promises.rm(root, { recursive: true, force: true }).catch(() => undefined);
      this.trace.write(sectionEnd('cleanup_file_variables'));
    }
    if (end.state === 'success') this.trace.write(`${ANSI.boldGreen}Job succeeded${ANSI.reset}\n`);
    else this.trace.write(error(end.message));
    await this.trace.finish(
      end.state === 'success'
        ? { state: 'success' }
        : { state: 'failed', failureReason: end.reason, exitCode: end.exitCode },
    );
  }

  /** The job's directories, the trace's header (executor, image, services) and its environment. */
  private async prepare(root: string): Promise<JobContext> {
    const job = this.job;
    const s = this.settings;
    const projectDir = path.join(root, 'project');
    const tmpDir = path.join(root, 'tmp');
    await fs.promises.mkdir(projectDir, { recursive: true });
    await fs.promises.mkdir(tmpDir, { recursive: true, mode: 0o700 });
    if (s.user)
      for (const dir of [root, projectDir, tmpDir]) await fs.promises.chown(dir, s.user.uid, s.user.gid);

    this.trace.write(`${ANSI.clear}Running with forge-api runner ${RUNNER_VERSION}${ANSI.reset}\n`);
    this.trace.write(
      `${ANSI.clear}  on ${s.description} ${shortToken(s.client.token)}, system ID: ${s.client.systemId}${ANSI.reset}\n`,
    );
    this.trace.write(sectionStart('prepare_executor', 'Preparing the "shell" executor'));
    this.trace.write(`${ANSI.clear}Using Shell (bash) executor...${ANSI.reset}\n`);
    if (job.image?.name)
      this.trace.write(
        warning(
          `image "${job.image.name}" is recorded but not used: the shell executor runs the job on the runner's machine`,
        ),
      );
    for (const service of job.services ?? [])
      if (service.name)
        this.trace.write(
          warning(
            `service "${service.name}" is recorded but not started: the shell executor does not use services`,
          ),
        );
    this.trace.write(sectionEnd('prepare_executor'));
    this.trace.write(sectionStart('prepare_script', 'Preparing environment'));
    this.trace.write(`Running on ${os.hostname()}${s.user ? ` as ${s.user.name}` : ''}...\n`);
    this.trace.write(sectionEnd('prepare_script'));

    const variables = expandAll([
      ...runnerVariables({ buildsDir: root, projectDir, tmpDir }, s.concurrentId, shortToken(s.client.token)),
      ...((job.variables ?? []) as Variable[]),
      ...afterJobVariables(),
    ]);
    const lookup = (key: string) => variables.findLast((v) => v.key === key)?.value;
    const base = inheritedEnvironment(process.env);
    if (s.user?.home) Object.assign(base, { HOME: s.user.home, USER: s.user.name, LOGNAME: s.user.name });
    const env = await jobEnvironment(variables, tmpDir, base, s.user);
    const context: JobContext = {
      job,
      projectDir,
      tmpDir,
      env,
      lookup,
      trace: this.trace,
      user: s.user,
      client: s.client,
    };
    return context;
  }

  private async stages(root: string, timeoutS: number): Promise<JobEnd> {
    const job = this.job;
    const s = this.settings;
    const context = await this.prepare(root);
    const { projectDir, tmpDir } = context;

    this.trace.write(sectionStart('get_sources', 'Getting source from Git repository'));
    const fetched = await getSources(context, (p) => this.track(p));
    this.trace.write(sectionEnd('get_sources'));
    if (this.stopped) return this.stoppedEnd(timeoutS);
    if (!fetched)
      return {
        state: 'failed',
        reason: 'runner_system_failure',
        message: 'Job failed: getting the sources failed',
      };

    if (job.cache?.length) {
      this.trace.write(sectionStart('restore_cache', 'Restoring cache'));
      await restoreCaches(context, s.cacheDir);
      this.trace.write(sectionEnd('restore_cache'));
    }
    if (job.dependencies?.some((d) => d.artifacts_file)) {
      this.trace.write(sectionStart('download_artifacts', 'Downloading artifacts'));
      const ok = await downloadDependencies(context);
      this.trace.write(sectionEnd('download_artifacts'));
      if (!ok)
        return {
          state: 'failed',
          reason: 'script_failure',
          message: 'Job failed: downloading artifacts failed',
        };
    }

    const steps = job.steps ?? [];
    const main = steps.filter((step) => step.name !== 'after_script');
    let exitCode = 0;
    if (!this.stopped) {
      this.trace.write(sectionStart('step_script', 'Executing "step_script" stage of the job script'));
      exitCode = await this.runStep(
        main.flatMap((step) => step.script ?? []),
        context.env,
        projectDir,
        tmpDir,
        'step_script',
      );
      this.trace.write(sectionEnd('step_script'));
    }
    const succeeded = exitCode === 0 && !this.stopped;
    const status = this.canceled ? 'canceled' : succeeded ? 'success' : 'failed';

    const after = steps.find((step) => step.name === 'after_script');
    if (after?.script?.length && !this.aborted)
      await this.afterScript(after, { ...context.env, CI_JOB_STATUS: status }, projectDir, tmpDir);
    if (this.canceled || this.aborted) return this.stoppedEnd(timeoutS);
    if (!(await this.handOn(context, succeeded)) && succeeded)
      return {
        state: 'failed',
        reason: 'unknown_failure',
        message: 'Job failed: uploading artifacts failed',
      };
    if (this.timedOut) return this.stoppedEnd(timeoutS);
    if (succeeded) return { state: 'success' };
    return {
      state: 'failed',
      reason: 'script_failure',
      exitCode,
      message: `Job failed: exit code ${exitCode}`,
    };
  }

  /** Saves the cache and uploads artifacts and reports, as `when` says for the job's result; false on a failed upload. */
  private async handOn(context: JobContext, succeeded: boolean): Promise<boolean> {
    const job = this.job;
    const s = this.settings;
    if (job.cache?.length) {
      this.trace.write(
        sectionStart('archive_cache', `Saving cache for ${succeeded ? 'successful' : 'failed'} job`),
      );
      await saveCaches(context, s.cacheDir, succeeded);
      this.trace.write(sectionEnd('archive_cache'));
    }
    const uploads = (job.artifacts ?? []).filter((a) =>
      succeeded ? a.when !== 'on_failure' : a.when === 'on_failure' || a.when === 'always',
    );
    if (uploads.length) {
      const name = `upload_artifacts_on_${succeeded ? 'success' : 'failure'}`;
      this.trace.write(
        sectionStart(name, `Uploading artifacts for ${succeeded ? 'successful' : 'failed'} job`),
      );
      const ok = await uploadArtifacts(context, uploads);
      this.trace.write(sectionEnd(name));
      return ok;
    }
    return true;
  }

  private stoppedEnd(timeoutS: number): JobEnd {
    if (this.aborted)
      return {
        state: 'failed',
        reason: 'runner_system_failure',
        message: 'Job failed (system failure): aborted',
      };
    if (this.canceled) return { state: 'failed', reason: 'job_canceled', message: 'Job failed: canceled' };
    return {
      state: 'failed',
      reason: 'job_execution_timeout',
      message: `Job failed: execution took longer than ${goDuration(timeoutS)} seconds`,
    };
  }

  private track(process: RunningProcess): RunningProcess {
    this.current = process;
    // After a timeout, after_script still runs (bounded by its own timeout); after a cancel, nothing does.
    if (this.canceled || this.aborted) process.kill();
    void process.done.then(() => {
      if (this.current === process) this.current = undefined;
    });
    return process;
  }

  /** Runs commands in a bash of their own (its own process group); the exit code. */
  private async runStep(
    commands: string[],
    env: NodeJS.ProcessEnv,
    cwd: string,
    tmpDir: string,
    name: string,
  ): Promise<number> {
    const script = path.join(tmpDir, `${name}-${crypto.randomBytes(4).toString('hex')}.sh`);
    await fs.promises.writeFile(script, stepScript(commands), { mode: 0o700 });
    if (this.settings.user) await fs.promises.chown(script, this.settings.user.uid, this.settings.user.gid);
    const child = this.track(
      runProcess('bash', ['--noprofile', '--norc', script], {
        cwd,
        env,
        user: this.settings.user,
        onOutput: (chunk) => this.trace.write(chunk),
      }),
    );
    return child.done;
  }

  private async afterScript(
    step: JobStep,
    env: NodeJS.ProcessEnv,
    cwd: string,
    tmpDir: string,
  ): Promise<void> {
    this.trace.write(sectionStart('after_script', 'Running after_script'));
    this.trace.write(notice('Running after script...'));
    const limit = step.timeout && step.timeout > 0 ? step.timeout : AFTER_SCRIPT_TIMEOUT_S;
    const timer = setTimeout(() => this.current?.kill(), limit * 1000);
    const code = await this.runStep(step.script, env, cwd, tmpDir, 'after_script');
    clearTimeout(timer);
    if (code !== 0)
      this.trace.write(warning(`after_script failed, but job will continue unaffected: exit code ${code}`));
    this.trace.write(sectionEnd('after_script'));
  }
}
