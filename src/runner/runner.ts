/**
 * The polling loop: `concurrency` workers, each long-polling POST /jobs/request (the server holds it up
 * to about 50 s) and running the job it gets to its end before asking again.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { RunnerClient } from './client.js';
import type { RunnerSettings } from './config.js';
import { JobRun } from './job.js';
import type { JobUser } from './proc.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** FORGE_RUNNER_USER: a user name, or uid[:gid]; its home from the passwd database. */
export function resolveUser(spec: string): JobUser {
  const numeric = /^(\d+)(?::(\d+))?$/.exec(spec);
  const entry = spawnSync('getent', ['passwd', numeric ? numeric[1] : spec], { encoding: 'utf8' });
  const fields = entry.status === 0 ? entry.stdout.trim().split(':') : [];
  if (!numeric && fields.length < 7) throw new Error(`FORGE_RUNNER_USER: no user ${spec}`);
  const uid = numeric ? Number(numeric[1]) : Number(fields[2]);
  const gid = numeric?.[2] !== undefined ? Number(numeric[2]) : fields.length >= 7 ? Number(fields[3]) : uid;
  if (process.getuid && process.getuid() !== 0 && process.getuid() !== uid)
    throw new Error(
      'FORGE_RUNNER_USER needs the runner to run as root (it switches to that user for each job)',
    );
  return { uid, gid, name: fields[0] ?? String(uid), home: fields[5] };
}

export class Runner {
  private readonly client: RunnerClient;
  private readonly jobs = new Set<JobRun>();
  private stopping = false;
  private readonly user?: JobUser;

  constructor(
    private readonly settings: RunnerSettings,
    token: string,
    private readonly log: (message: string) => void,
  ) {
    this.client = new RunnerClient(settings.url, token, settings.systemId);
    if (settings.user) this.user = resolveUser(settings.user);
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.settings.buildsDir, { recursive: true });
    fs.mkdirSync(this.settings.cacheDir, { recursive: true });
    this.log(
      `runner polling ${this.settings.url} with ${this.settings.concurrency} worker(s); jobs run in ${this.settings.buildsDir}` +
        (this.user ? ` as ${this.user.name}` : ''),
    );
    const workers = Array.from({ length: this.settings.concurrency }, (_, i) => this.worker(i + 1));
    await Promise.all(workers);
  }

  /** Stops asking for jobs; running jobs are aborted (they fail as system failures) and reported. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const job of this.jobs) job.abort();
    while (this.jobs.size) await sleep(100);
  }

  private async worker(concurrentId: number): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      let job;
      try {
        job = await this.client.requestJob();
        failures = 0;
      } catch (err) {
        failures++;
        if (failures === 1 || failures % 20 === 0)
          this.log(`checking for jobs failed: ${(err as Error).message}`);
        await sleep(Math.min(1000 * failures, 10_000));
        continue;
      }
      if (job === 'forbidden') {
        this.log('checking for jobs... forbidden (is the runner token still valid?)');
        await sleep(10_000);
        continue;
      }
      if (job === 'failed') {
        await sleep(3000);
        continue;
      }
      if (!job) continue;
      if (this.stopping) break;
      this.log(
        `job ${job.id} received (${job.job_info?.name ?? ''}, project ${job.job_info?.project_id ?? '?'})`,
      );
      const run = new JobRun(job, {
        client: this.client,
        buildsDir: this.settings.buildsDir,
        cacheDir: this.settings.cacheDir,
        user: this.user,
        concurrentId,
        description: this.settings.description,
        intervalMs: this.settings.intervalMs,
        log: this.log,
      });
      this.jobs.add(run);
      try {
        await run.run();
      } catch (err) {
        this.log(`job ${job.id} ended with an error: ${(err as Error).message}`);
      } finally {
        this.jobs.delete(run);
      }
      this.log(`job ${job.id} finished`);
    }
  }
}
