/**
 * A job's trace as GitLab Runner keeps it (network/trace.go): output is masked, appended to a buffer,
 * and sent incrementally with PATCH /jobs/:id/trace; the final PUT /jobs/:id carries the state and the
 * trace's checksum, and is retried while the server answers 202 (or 412 after resending the trace).
 * Job-Status `canceled`/`canceling` on any answer asks the job to stop; 403/404 abort it.
 */
import type { HttpAnswer, JobUpdate, RunnerClient } from './client.js';
import { Crc32 } from './crc32.js';
import { Masker } from './masker.js';

/** GitLab Runner's DefaultTracePatchLimit. */
const PATCH_LIMIT = 1024 * 1024;
/** The shortest update interval a server may ask for. */
const MIN_INTERVAL_MS = 1000;
/** An unreachable server is retried this long at the end before the job is given up. */
const FINAL_UPDATE_LIMIT_MS = 10 * 60 * 1000;

export type RemoteSignal = 'cancel' | 'abort';

export interface TraceOptions {
  client: RunnerClient;
  jobId: number;
  jobToken: string;
  masked: string[];
  intervalMs: number;
  /** Called once when the server asks the job to stop (cancel) or forbids it to go on (abort). */
  onRemote: (signal: RemoteSignal) => void;
  log: (message: string) => void;
}

export class JobTrace {
  private readonly masker: Masker;
  private readonly crc = new Crc32();
  private chunks: Buffer[] = [];
  private size = 0;
  private sent = 0;
  private lastSentAt = 0;
  private intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();
  private finished = false;
  private signalled: RemoteSignal | undefined;

  constructor(private readonly options: TraceOptions) {
    this.masker = new Masker(options.masked);
    this.intervalMs = options.intervalMs;
  }

  start(): void {
    this.schedule();
  }

  write(data: Buffer | string): void {
    if (this.finished) return;
    this.append(this.masker.write(typeof data === 'string' ? Buffer.from(data) : data));
  }

  /** The trace so far, as sent (masked). */
  text(): string {
    return Buffer.concat(this.chunks).toString();
  }

  private append(bytes: Buffer): void {
    if (!bytes.length) return;
    this.chunks.push(bytes);
    this.size += bytes.length;
    this.crc.update(bytes);
  }

  private bytes(from: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.chunks = [all];
    return all.subarray(from, Math.min(all.length, from + PATCH_LIMIT));
  }

  private schedule(): void {
    if (this.finished) return;
    this.timer = setTimeout(() => {
      this.sending = this.sending
        .then(() => this.tick())
        .catch((err: Error) => this.options.log(`trace update failed: ${err.message}`));
      void this.sending.then(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }

  /** One incremental update: the new output, or else a touch (PUT running) so a cancel is seen promptly. */
  private async tick(): Promise<void> {
    if (this.finished) return;
    if (this.size > this.sent) {
      const state = await this.sendPatch();
      if (state === 'abort') this.remote('abort');
      return;
    }
    const answer = await this.options.client.updateJob(this.options.jobId, this.options.jobToken, {
      state: 'running',
      checksum: this.crc.digest(),
      bytesize: this.size,
    });
    this.watch(answer);
    if (answer.status === 403 || answer.status === 404) this.remote('abort');
    else if (answer.status === 200) this.lastSentAt = Date.now();
  }

  private remote(signal: RemoteSignal): void {
    if (this.signalled === 'abort' || this.signalled === signal) return;
    this.signalled = signal;
    this.options.onRemote(signal);
  }

  /** Job-Status and the update interval the server asks for. */
  private watch(answer: HttpAnswer): void {
    const status = answer.headers['job-status'];
    if (status === 'canceled' || status === 'canceling') this.remote('cancel');
    else if (status === 'failed') this.remote('abort');
    // A server asking for more frequent updates (a trace being watched) is followed; a longer interval is
    // not: the updates are also how a cancel reaches the job, which must stop within seconds.
    const interval = Number(answer.headers['x-gitlab-trace-update-interval']);
    if (Number.isFinite(interval) && interval > 0)
      this.intervalMs = Math.min(Math.max(interval * 1000, MIN_INTERVAL_MS), this.options.intervalMs);
  }

  private async sendPatch(): Promise<'ok' | 'retry' | 'abort' | 'gone'> {
    const content = this.bytes(this.sent);
    if (!content.length) return 'ok';
    const answer = await this.options.client.patchTrace(
      this.options.jobId,
      this.options.jobToken,
      content,
      this.sent,
    );
    this.watch(answer);
    if (answer.status === 202) {
      this.sent += content.length;
      this.lastSentAt = Date.now();
      return 'ok';
    }
    if (answer.status === 416) {
      // The server has a different length: resume from the end of what it holds.
      const range = /^(\d+)-(\d+)$/.exec(String(answer.headers.range ?? ''));
      this.sent = range ? Math.min(Number(range[2]), this.size) : 0;
      return 'retry';
    }
    if (answer.status === 404) return 'gone';
    if (answer.status === 403) return 'abort';
    return 'retry';
  }

  private async sendAll(deadline: number): Promise<boolean> {
    while (this.size > this.sent) {
      let state: Awaited<ReturnType<JobTrace['sendPatch']>>;
      try {
        state = await this.sendPatch();
      } catch (err) {
        this.options.log(`sending the trace failed: ${(err as Error).message}`);
        state = 'retry';
      }
      if (state === 'abort' || state === 'gone') return false;
      if (state === 'retry') {
        if (Date.now() > deadline) return false;
        await sleep(Math.min(this.intervalMs, 3000));
      }
    }
    return true;
  }

  /**
   * The job's end: the rest of the output, then PUT /jobs/:id until the server takes it (200) or refuses
   * it for good (403, 404); 202 and 412 are retried as GitLab Runner does.
   */
  async finish(update: Omit<JobUpdate, 'checksum' | 'bytesize'>): Promise<void> {
    this.append(this.masker.end());
    this.finished = true;
    clearTimeout(this.timer);
    await this.sending.catch(() => undefined);
    const deadline = Date.now() + FINAL_UPDATE_LIMIT_MS;
    for (let attempt = 0; ; attempt++) {
      // When the trace cannot be sent, the final state still goes, GitLab Runner's way.
      await this.sendAll(deadline);
      let answer: HttpAnswer;
      try {
        answer = await this.options.client.updateJob(this.options.jobId, this.options.jobToken, {
          ...update,
          checksum: this.crc.digest(),
          bytesize: this.size,
        });
      } catch (err) {
        this.options.log(`updating the job failed: ${(err as Error).message}`);
        if (Date.now() > deadline) return;
        await sleep(3000);
        continue;
      }
      if (answer.status === 200 || answer.status === 403 || answer.status === 404) return;
      if (answer.headers['job-status'] === 'failed' && answer.status !== 202) return;
      if (answer.status === 412) this.sent = 0; // the server's trace differs: send it all again
      if (Date.now() > deadline) return;
      await sleep(Math.min(this.intervalMs, 1000 * Math.min(2 ** attempt, 5)));
    }
  }

  get lastUpdate(): number {
    return this.lastSentAt;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
