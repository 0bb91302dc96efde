/**
 * A protocol driver that talks to the runner API as GitLab Runner does (`network/gitlab.go`), and
 * reacts to each status code the way its code does:
 *
 * - request job: 201 → a job; 204 → none (keep `X-GitLab-Last-Update` for the next request's
 *   `last_update`); 403 → the runner is gone (stop asking); 409 → a conflict, ask again; else an error.
 * - update job: 200 → accepted; 202 → not yet, wait `X-GitLab-Trace-Update-Interval`-ish and send again;
 *   412 → the trace is out of step, resend it; 403 / 404 → abort the job (canceled or gone).
 * - trace: 202 → the server has `Range` end bytes, go on; 416 → resend from the end of `Range`;
 *   403 → abort; `Job-Status: canceled|canceling` → the job is to stop.
 */
import { send, type TestResponse } from './server.js';

export interface RunnerJobPayload {
  id: number;
  token: string;
  variables: Array<{ key: string; value: string; public: boolean; masked: boolean; file?: boolean }>;
  git_info: {
    repo_url: string;
    ref: string;
    sha: string;
    before_sha: string;
    ref_type: string;
    depth: number;
  };
  job_info: { id: number; name: string; stage: string; project_id: number; project_name: string };
  steps: Array<{ name: string; script: string[]; timeout: number; when: string; allow_failure: boolean }>;
  runner_info: { timeout: number };
  [key: string]: unknown;
}

export type RequestOutcome =
  | { kind: 'job'; job: RunnerJobPayload }
  | { kind: 'none'; lastUpdate: string }
  | { kind: 'forbidden' }
  | { kind: 'conflict' };

export type UpdateOutcome = 'accepted' | 'aborted' | 'trace-mismatch' | 'not-found';

export class RunnerDriver {
  /** The queue version of the last 204, sent back as `last_update`. */
  lastUpdate = '';
  /** Bytes of the log the server has, per job (from its `Range`). */
  private readonly sent = new Map<number, number>();
  /** The whole log the runner has, per job. */
  private readonly logs = new Map<number, Buffer>();
  /** The last `Job-Status` the server gave, per job. */
  readonly jobStatus = new Map<number, string>();

  constructor(
    private readonly api: string,
    readonly token: string,
    private readonly info: Record<string, unknown> = {
      name: 'gitlab-runner',
      version: '17.7.0',
      executor: 'shell',
    },
  ) {}

  async requestJob(): Promise<RequestOutcome> {
    const res = await send(`${this.api}/jobs/request`, 'POST', {
      json: { token: this.token, system_id: 's_test', last_update: this.lastUpdate, info: this.info },
    });
    switch (res.status) {
      case 201:
        return { kind: 'job', job: res.body as RunnerJobPayload };
      case 204:
        this.lastUpdate = res.headers.get('x-gitlab-last-update') ?? '';
        return { kind: 'none', lastUpdate: this.lastUpdate };
      case 403:
        return { kind: 'forbidden' };
      case 409:
        return { kind: 'conflict' };
      default:
        throw new Error(`request job: unexpected ${res.status} ${res.text}`);
    }
  }

  /** Asks until a job comes (409 and 204 ask again), at most `attempts` times. */
  async nextJob(attempts = 20): Promise<RunnerJobPayload | null> {
    for (let i = 0; i < attempts; i++) {
      const outcome = await this.requestJob();
      if (outcome.kind === 'job') return outcome.job;
      if (outcome.kind === 'forbidden') return null;
    }
    return null;
  }

  /**
   * Adds `text` to the job's log and sends what the server lacks from the offset it has; on 416 resends
   * from the end of the server's `Range`, as GitLab Runner's incremental trace does.
   */
  async sendTrace(job: RunnerJobPayload, text: string | Buffer): Promise<'ok' | 'aborted'> {
    const log = Buffer.concat([this.logs.get(job.id) ?? Buffer.alloc(0), Buffer.from(text)]);
    this.logs.set(job.id, log);
    for (let attempt = 0; attempt < 5; attempt++) {
      const start = this.sent.get(job.id) ?? 0;
      const res = await this.patchTrace(job, log.subarray(start), start);
      this.jobStatus.set(job.id, res.headers.get('job-status') ?? '');
      if (res.status === 202) {
        this.sent.set(job.id, rangeEnd(res));
        return 'ok';
      }
      if (res.status === 416) {
        this.sent.set(job.id, rangeEnd(res));
        continue;
      }
      if (res.status === 403) return 'aborted';
      throw new Error(`trace: unexpected ${res.status} ${res.text}`);
    }
    return 'aborted';
  }

  /** One raw PATCH, for the tests of each status code. */
  patchTrace(job: { id: number; token: string }, data: Buffer, start: number, range?: string) {
    return send(`${this.api}/jobs/${job.id}/trace`, 'PATCH', {
      headers: {
        'JOB-TOKEN': job.token,
        'Content-Type': 'text/plain',
        ...(range !== ''
          ? { 'Content-Range': range ?? `${start}-${start + Math.max(0, data.length - 1)}` }
          : {}),
      },
      body: data as unknown as string,
    });
  }

  /** Reports the job's end; 202 is retried (as the runner does) until `retries` runs out. */
  async finish(
    job: RunnerJobPayload,
    state: 'success' | 'failed',
    extra: { exit_code?: number; failure_reason?: string; bytesize?: number } = {},
    retries = 5,
  ): Promise<UpdateOutcome> {
    for (let i = 0; i <= retries; i++) {
      const res = await this.updateJob(job, {
        state,
        ...(extra.exit_code !== undefined ? { exit_code: extra.exit_code } : {}),
        ...(extra.failure_reason ? { failure_reason: extra.failure_reason } : {}),
        output: { checksum: 'crc32:00000000', bytesize: extra.bytesize ?? this.sent.get(job.id) ?? 0 },
      });
      this.jobStatus.set(job.id, res.headers.get('job-status') ?? '');
      if (res.status === 200) return 'accepted';
      if (res.status === 202) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      if (res.status === 412) return 'trace-mismatch';
      if (res.status === 403) return 'aborted';
      if (res.status === 404) return 'not-found';
      throw new Error(`update job: unexpected ${res.status} ${res.text}`);
    }
    return 'aborted';
  }

  updateJob(job: { id: number; token: string }, body: Record<string, unknown>): Promise<TestResponse> {
    return send(`${this.api}/jobs/${job.id}`, 'PUT', { json: { token: job.token, ...body } });
  }
}

function rangeEnd(res: TestResponse): number {
  const match = /^0-(\d+)$/.exec(res.headers.get('range') ?? '');
  if (!match) throw new Error(`no Range in ${res.status}`);
  return Number(match[1]);
}
