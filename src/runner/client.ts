/**
 * The runner's side of the runner API, as GitLab Runner's network client speaks it: every call is an
 * HTTP request to the server's /api/v4, answered by status code (network/gitlab.go's cases).
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { JobPayload } from './payload.js';

export const RUNNER_NAME = 'forge-api-runner';
export const RUNNER_VERSION = '0.1.0';

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

interface Send {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string | Readable;
  /** Where a 200 answer's body goes instead of memory. */
  saveTo?: string;
  timeoutMs?: number;
}

/** What the runner says of itself on /jobs/request (GitLab Runner's VersionInfo and features). */
export function runnerInfo() {
  return {
    name: RUNNER_NAME,
    version: RUNNER_VERSION,
    revision: 'builtin',
    platform: process.platform,
    architecture: process.arch,
    executor: 'shell',
    shell: 'bash',
    features: {
      variables: true,
      artifacts: true,
      cache: true,
      shared: true,
      upload_multiple_artifacts: true,
      upload_raw_artifacts: true,
      refspecs: true,
      masking: true,
      raw_variables: true,
      artifacts_exclude: true,
      multi_build_steps: true,
      trace_reset: true,
      trace_checksum: true,
      trace_size: true,
      cancelable: true,
      return_exit_code: true,
    },
  };
}

export class RunnerClient {
  private readonly agent: http.Agent;
  private lastUpdate = '';

  constructor(
    /** The server's root, e.g. http://localhost:8080 (the API is under /api/v4). */
    readonly url: string,
    readonly token: string,
    readonly systemId: string,
  ) {
    const secure = url.startsWith('https:');
    this.agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  }

  /** Raw request against /api/v4; network errors reject. */
  send(req: Send): Promise<HttpAnswer> {
    const target = new URL(`${this.url.replace(/\/+$/, '')}/api/v4${req.path}`);
    const lib = target.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = lib.request(
        target,
        {
          method: req.method,
          headers: { 'User-Agent': `${RUNNER_NAME} ${RUNNER_VERSION}`, ...req.headers },
          agent: this.agent,
        },
        (response) => {
          const status = response.statusCode ?? 0;
          if (req.saveTo && status === 200) {
            pipeline(response, fs.createWriteStream(req.saveTo)).then(
              () => resolve({ status, headers: response.headers, body: Buffer.alloc(0) }),
              reject,
            );
            return;
          }
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status, headers: response.headers, body: Buffer.concat(chunks) }),
          );
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      if (req.timeoutMs)
        request.setTimeout(req.timeoutMs, () => request.destroy(new Error('request timed out')));
      const body = req.body;
      if (body === undefined) request.end();
      else if (typeof body === 'string' || Buffer.isBuffer(body)) request.end(body);
      else pipeline(body, request).catch((err: Error) => request.destroy(err));
    });
  }

  private json(method: string, path: string, body: unknown, timeoutMs?: number): Promise<HttpAnswer> {
    return this.send({
      method,
      path,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      timeoutMs,
    });
  }

  /** POST /runners/verify: true when the runner exists, false on 403 (it was removed). */
  async verify(): Promise<boolean> {
    const answer = await this.json('POST', '/runners/verify', {
      token: this.token,
      system_id: this.systemId,
    });
    if (answer.status === 200) return true;
    if (answer.status === 403) return false;
    throw new Error(`verifying the runner failed: ${answer.status} ${answer.body.toString().slice(0, 200)}`);
  }

  /**
   * POST /jobs/request, long-polled by the server: a job, null when there is none (204), 'forbidden' on
   * 403, 'failed' on any other answer (GitLab Runner then waits before it asks again).
   */
  async requestJob(): Promise<JobPayload | null | 'forbidden' | 'failed'> {
    const answer = await this.json(
      'POST',
      '/jobs/request',
      {
        token: this.token,
        system_id: this.systemId,
        last_update: this.lastUpdate || undefined,
        info: runnerInfo(),
      },
      // The server holds the request about 50 s; past 90 s the connection is taken for dead.
      90_000,
    );
    const lastUpdate = answer.headers['x-gitlab-last-update'];
    if (typeof lastUpdate === 'string') this.lastUpdate = lastUpdate;
    if (answer.status === 201) return JSON.parse(answer.body.toString()) as JobPayload;
    if (answer.status === 403) return 'forbidden';
    if (answer.status === 204) return null;
    return 'failed';
  }

  /** PUT /jobs/:id with the job's token: the status code and Job-Status decide what the runner does next. */
  updateJob(id: number, jobToken: string, update: JobUpdate): Promise<HttpAnswer> {
    return this.json('PUT', `/jobs/${id}`, {
      info: runnerInfo(),
      token: jobToken,
      state: update.state,
      failure_reason: update.failureReason,
      exit_code: update.exitCode,
      checksum: update.checksum,
      output: { checksum: update.checksum, bytesize: update.bytesize },
    });
  }

  /** PATCH /jobs/:id/trace with bytes [offset, offset + content.length). */
  patchTrace(id: number, jobToken: string, content: Buffer, offset: number): Promise<HttpAnswer> {
    return this.send({
      method: 'PATCH',
      path: `/jobs/${id}/trace?debug_trace=false`,
      headers: {
        'Content-Type': 'text/plain',
        'Content-Range': `${offset}-${offset + content.length - 1}`,
        'JOB-TOKEN': jobToken,
      },
      body: content,
    });
  }

  /** POST /jobs/:id/artifacts, multipart field `file`, streamed from disk. */
  async uploadArtifact(
    id: number,
    jobToken: string,
    file: string,
    options: { filename: string; type: string; format: string; expireIn?: string },
  ): Promise<HttpAnswer> {
    const query = new URLSearchParams();
    if (options.expireIn) query.set('expire_in', options.expireIn);
    query.set('artifact_format', options.format);
    query.set('artifact_type', options.type);
    const boundary = `forge-runner-${Math.random().toString(16).slice(2)}${Date.now()}`;
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${options.filename.replace(/"/g, '')}"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const size = (await fs.promises.stat(file)).size;
    async function* parts() {
      yield head;
      for await (const chunk of fs.createReadStream(file)) yield chunk as Buffer;
      yield tail;
    }
    return this.send({
      method: 'POST',
      path: `/jobs/${id}/artifacts?${query.toString()}`,
      headers: {
        'JOB-TOKEN': jobToken,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(head.length + size + tail.length),
      },
      body: Readable.from(parts()),
    });
  }

  /** GET /jobs/:id/artifacts with the dependency's token, saved to `file`; follows one redirect. */
  async downloadArtifacts(id: number, jobToken: string, file: string): Promise<number> {
    const answer = await this.send({
      method: 'GET',
      path: `/jobs/${id}/artifacts`,
      headers: { 'JOB-TOKEN': jobToken },
      saveTo: file,
    });
    if (answer.status === 302 && typeof answer.headers.location === 'string')
      return downloadUrl(answer.headers.location, file);
    return answer.status;
  }
}

export interface JobUpdate {
  state: 'running' | 'success' | 'failed';
  failureReason?: string;
  exitCode?: number;
  checksum: string;
  bytesize: number;
}

/** A presigned object-storage address: no runner credentials go there. */
function downloadUrl(location: string, file: string): Promise<number> {
  const lib = location.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    lib
      .get(location, (response) => {
        const status = response.statusCode ?? 0;
        if (status !== 200) {
          response.resume();
          resolve(status);
          return;
        }
        pipeline(response, fs.createWriteStream(file)).then(() => resolve(200), reject);
      })
      .on('error', reject);
  });
}
