/**
 * The built-in runner's executor against a stand-in for the runner API (a plain HTTP server that
 * answers as GitLab's runner endpoints do): trace patches with Content-Range (and a 416 resume), the final
 * PUT retried on 202, artifacts and reports uploaded as multipart, dependencies downloaded, a local
 * cache, masking across output chunks, exit codes, cancel and timeout.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import busboy from 'busboy';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunnerClient } from '../../src/runner/client.js';
import { Crc32 } from '../../src/runner/crc32.js';
import { extractZip } from '../../src/runner/files.js';
import { JobRun } from '../../src/runner/job.js';
import type { JobPayload } from '../../src/runner/payload.js';
import type { JobUser } from '../../src/runner/proc.js';

interface Upload {
  type: string;
  format: string;
  expireIn: string | null;
  filename: string;
  data: Buffer;
}

interface FakeJob {
  trace: Buffer;
  updates: Array<{
    state: string;
    failure_reason?: string;
    exit_code?: number;
    checksum?: string;
    output?: { checksum: string; bytesize: number };
  }>;
  uploads: Upload[];
  patches: string[];
  cancel: boolean;
  /** Answers the first patch with 416 and this Range. */
  rangeMismatch?: string;
  /** Answers this many final updates with 202 first. */
  accepted: number;
}

const jobs = new Map<number, FakeJob>();
let dependencyZip: Buffer;
let server: http.Server;
let url: string;
let root: string;

function fakeJob(id: number, extra: Partial<FakeJob> = {}): FakeJob {
  const job: FakeJob = {
    trace: Buffer.alloc(0),
    updates: [],
    uploads: [],
    patches: [],
    cancel: false,
    accepted: 0,
    ...extra,
  };
  jobs.set(id, job);
  return job;
}

function handle(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void {
  const u = new URL(req.url ?? '/', 'http://x');
  const m = /^\/api\/v4\/jobs\/(\d+)(\/trace|\/artifacts)?$/.exec(u.pathname);
  const job = m ? jobs.get(Number(m[1])) : undefined;
  const status = job?.cancel ? 'canceling' : 'running';
  if (req.method === 'GET' && m?.[2] === '/artifacts') {
    if (req.headers['job-token'] !== `dep-token-${m[1]}`) return void res.writeHead(403).end();
    return void res.writeHead(200, { 'Content-Type': 'application/zip' }).end(dependencyZip);
  }
  if (!job) return void res.writeHead(404).end();
  if (req.method === 'PATCH' && m?.[2] === '/trace') {
    const range = /^(\d+)-(\d+)$/.exec(String(req.headers['content-range']));
    if (!range) return void res.writeHead(400).end();
    job.patches.push(String(req.headers['content-range']));
    if (job.rangeMismatch) {
      const answer = job.rangeMismatch;
      job.rangeMismatch = undefined;
      return void res.writeHead(416, { Range: answer, 'Job-Status': status }).end();
    }
    if (Number(range[1]) !== job.trace.length)
      return void res.writeHead(416, { Range: `0-${job.trace.length}`, 'Job-Status': status }).end();
    job.trace = Buffer.concat([job.trace, body]);
    return void res.writeHead(202, { Range: `0-${job.trace.length}`, 'Job-Status': status }).end();
  }
  if (req.method === 'PUT' && !m?.[2]) {
    const update = JSON.parse(body.toString()) as FakeJob['updates'][number];
    job.updates.push(update);
    if (update.state !== 'running' && job.accepted > 0) {
      job.accepted--;
      return void res.writeHead(202, { 'Job-Status': status }).end();
    }
    return void res
      .writeHead(200, { 'Job-Status': update.state === 'running' ? status : update.state })
      .end();
  }
  if (req.method === 'POST' && m?.[2] === '/artifacts') {
    const parser = busboy({ headers: req.headers });
    parser.on('file', (_name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () =>
        job.uploads.push({
          type: u.searchParams.get('artifact_type') ?? '',
          format: u.searchParams.get('artifact_format') ?? '',
          expireIn: u.searchParams.get('expire_in'),
          filename: info.filename ?? '',
          data: Buffer.concat(chunks),
        }),
      );
    });
    parser.on('close', () => res.writeHead(201, { 'Content-Type': 'application/json' }).end('{}'));
    parser.end(body);
    return;
  }
  res.writeHead(404).end();
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-executor-'));
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from('from the build job\n'), 'dist/built.txt');
  zip.end();
  const parts: Buffer[] = [];
  for await (const chunk of zip.outputStream) parts.push(chunk as Buffer);
  dependencyZip = Buffer.concat(parts);
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.close();
  fs.rmSync(root, { recursive: true, force: true });
});

function payload(id: number, script: string[], extra: Partial<JobPayload> = {}): JobPayload {
  return {
    id,
    token: `job-token-${id}-abcdef`,
    job_info: { name: `job ${id}`, stage: 'test', project_id: 7, project_name: 'p' },
    git_info: { repo_url: 'http://unused.invalid/p.git', sha: 'a'.repeat(40), ref: 'main' },
    runner_info: { timeout: 60 },
    variables: [
      { key: 'GIT_STRATEGY', value: 'none', public: true, masked: false },
      { key: 'CI_JOB_ID', value: String(id), public: true, masked: false },
    ],
    steps: [{ name: 'script', script, timeout: 60, when: 'on_success', allow_failure: false }],
    ...extra,
  };
}

async function run(job: JobPayload, user?: JobUser): Promise<JobRun> {
  const settings = {
    user,
    client: new RunnerClient(url, 'glrt-test-runner-token', 's_000000000000'),
    buildsDir: path.join(root, 'builds'),
    cacheDir: path.join(root, 'cache'),
    concurrentId: 1,
    description: 'test runner',
    intervalMs: 150,
    log: () => undefined,
  };
  fs.mkdirSync(settings.buildsDir, { recursive: true });
  const jobRun = new JobRun(job, settings);
  await jobRun.run();
  return jobRun;
}

/** A process that exists and is not a zombie waiting for its (new) parent to reap it. */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

const crcOf = (data: Buffer) => {
  const crc = new Crc32();
  crc.update(data);
  return crc.digest();
};

async function zipEntries(data: Buffer): Promise<Record<string, string>> {
  const zip = await yauzl.fromBufferPromise(data);
  const out: Record<string, string> = {};
  for await (const entry of zip.eachEntry()) {
    const chunks: Buffer[] = [];
    for await (const c of await zip.openReadStreamPromise(entry)) chunks.push(c as Buffer);
    out[entry.fileName] = Buffer.concat(chunks).toString();
  }
  return out;
}

describe('the built-in runner runs a job on the shell executor', () => {
  it('masks, uploads artifacts and reports, downloads dependencies, and reports success with the checksum', async () => {
    const fake = fakeJob(101, { rangeMismatch: '0-0', accepted: 1 });
    const secret = 'Sup3r-Secret-Value!';
    const job = payload(
      101,
      [
        'echo "dependency: $(cat dist/built.txt)"',
        // The secret comes out in two writes, apart in time: two chunks of output.
        'printf "%s" "${MY_SECRET:0:7}"; sleep 0.4; printf "%s\\n" "${MY_SECRET:7}"',
        'echo "file variable holds: $(cat "$MY_FILE")"',
        'echo "expanded: $GREETING"',
        'mkdir -p out/keep out/skip && echo kept > out/keep/a.txt && echo skipped > out/skip/b.txt',
        'printf "<testsuites><testsuite name=\\"s\\" tests=\\"1\\"/></testsuites>" > junit.xml',
      ],
      {
        variables: [
          { key: 'GIT_STRATEGY', value: 'none', public: true, masked: false },
          { key: 'MY_SECRET', value: secret, public: false, masked: true },
          { key: 'MY_FILE', value: 'file contents', public: false, masked: false, file: true },
          { key: 'NAME', value: 'world', public: true, masked: false },
          { key: 'GREETING', value: 'hello $NAME', public: true, masked: false },
        ],
        dependencies: [
          {
            id: 55,
            token: 'dep-token-55',
            name: 'build',
            artifacts_file: { filename: 'artifacts.zip', size: 1 },
          },
        ],
        artifacts: [
          {
            name: 'my-files',
            paths: ['out/'],
            exclude: ['out/skip/**'],
            when: 'on_success',
            artifact_type: 'archive',
            artifact_format: 'zip',
            expire_in: '1 day',
          },
          {
            name: 'junit',
            paths: ['junit.xml'],
            when: 'always',
            artifact_type: 'junit',
            artifact_format: 'gzip',
          },
        ],
        image: { name: 'ruby:3.3' },
      },
    );
    await run(job);
    const trace = fake.trace.toString();
    expect(trace).toContain('Running with forge-api runner');
    expect(trace).toContain('Executing "step_script" stage of the job script');
    expect(trace).toContain('image "ruby:3.3" is recorded but not used');
    expect(trace).toContain('dependency: from the build job');
    expect(trace).toContain('[MASKED]');
    expect(trace).not.toContain(secret);
    expect(trace).not.toContain(secret.slice(0, 7) + secret.slice(7, 9));
    expect(trace).toContain('file variable holds: file contents');
    expect(trace).toContain('expanded: hello world');
    expect(trace).toContain('Job succeeded');
    expect(fake.patches[0]).toMatch(/^0-\d+$/);
    const final = fake.updates.filter((u) => u.state !== 'running');
    expect(final.length).toBe(2); // 202 first, then retried
    expect(final[1]).toMatchObject({
      state: 'success',
      output: { checksum: crcOf(fake.trace), bytesize: fake.trace.length },
    });
    const archive = fake.uploads.find((u) => u.type === 'archive')!;
    expect(archive).toMatchObject({ format: 'zip', filename: 'my-files.zip', expireIn: '1 day' });
    expect(await zipEntries(archive.data)).toEqual({ 'out/keep/a.txt': 'kept\n' });
    const junit = fake.uploads.find((u) => u.type === 'junit')!;
    expect(junit).toMatchObject({ format: 'gzip', filename: 'junit.gz' });
    expect(zlib.gunzipSync(junit.data).toString()).toContain('<testsuites>');
  });

  it('sends the exit code of a failing script, runs after_script with CI_JOB_STATUS and uploads on_failure artifacts', async () => {
    const fake = fakeJob(102);
    await run(
      payload(102, ['echo failing > result.txt', 'exit 3'], {
        steps: [
          {
            name: 'script',
            script: ['echo failing > result.txt', 'exit 3'],
            timeout: 60,
            when: 'on_success',
          },
          { name: 'after_script', script: ['echo "after: $CI_JOB_STATUS"'], timeout: 60, when: 'always' },
        ],
        artifacts: [
          { paths: ['result.txt'], when: 'on_failure', artifact_type: 'archive', artifact_format: 'zip' },
          { paths: ['result.txt'], when: 'on_success', artifact_type: 'archive', artifact_format: 'zip' },
        ],
      }),
    );
    const trace = fake.trace.toString();
    expect(trace).toContain('after: failed');
    expect(trace).toContain('ERROR: Job failed: exit code 3');
    expect(fake.updates.at(-1)).toMatchObject({
      state: 'failed',
      failure_reason: 'script_failure',
      exit_code: 3,
    });
    expect(fake.uploads.map((u) => u.filename)).toEqual(['artifacts.zip']);
  });

  it('keeps a cache between jobs by key', async () => {
    const cache = [
      { key: 'deps-$CI_JOB_NAME_SLUG', paths: ['vendor/'], policy: 'pull-push', when: 'on_success' as const },
    ];
    const vars = [
      { key: 'GIT_STRATEGY', value: 'none', public: true, masked: false },
      { key: 'CI_JOB_NAME_SLUG', value: 'install', public: true, masked: false },
    ];
    fakeJob(103);
    await run(payload(103, ['mkdir -p vendor && echo cached > vendor/lib.txt'], { cache, variables: vars }));
    const second = fakeJob(104);
    await run(
      payload(104, ['cat vendor/lib.txt'], { cache: [{ ...cache[0], policy: 'pull' }], variables: vars }),
    );
    expect(second.trace.toString()).toContain('Successfully extracted cache');
    expect(second.trace.toString()).toMatch(/\ncached\n/);
  });

  it('stops the whole process group when the server says canceling', async () => {
    const fake = fakeJob(105);
    const pidFile = path.join(root, 'sleep.pid');
    const started = Date.now();
    const running = run(payload(105, [`sleep 600 & echo $! > ${pidFile}; wait`]));
    while (!fs.existsSync(pidFile) || !fs.readFileSync(pidFile, 'utf8').trim())
      await new Promise((r) => setTimeout(r, 50));
    const sleeper = Number(fs.readFileSync(pidFile, 'utf8'));
    fake.cancel = true;
    const canceledAt = Date.now();
    await running;
    expect(Date.now() - canceledAt).toBeLessThan(5000);
    expect(alive(sleeper)).toBe(false);
    expect(fake.updates.at(-1)).toMatchObject({ state: 'failed', failure_reason: 'job_canceled' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it.runIf(process.getuid?.() === 0)('runs the job as the configured unprivileged user', async () => {
    fs.chmodSync(root, 0o755);
    const fake = fakeJob(107);
    await run(
      payload(107, ['echo "uid=$(id -u) home=$HOME"', 'echo made > mine.txt', 'test -w "$CI_PROJECT_DIR"'], {
        artifacts: [{ paths: ['mine.txt'], artifact_type: 'archive', artifact_format: 'zip' }],
      }),
      { uid: 65534, gid: 65534, name: 'nobody', home: '/nonexistent' },
    );
    expect(fake.trace.toString()).toContain('uid=65534 home=/nonexistent');
    expect(fake.updates.at(-1)).toMatchObject({ state: 'success' });
    expect(await zipEntries(fake.uploads[0].data)).toEqual({ 'mine.txt': 'made\n' });
  });

  it('fails a job past its timeout with job_execution_timeout', async () => {
    const fake = fakeJob(106);
    await run(payload(106, ['sleep 30'], { runner_info: { timeout: 1 } }));
    expect(fake.updates.at(-1)).toMatchObject({ state: 'failed', failure_reason: 'job_execution_timeout' });
    expect(fake.trace.toString()).toContain('execution took longer than 1s seconds');
  });
});

describe('the runner extracts dependency and cache archives', () => {
  it('writes nothing outside the project directory, not through a symlink either, and gives the files to the job user', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-outside-'));
    const target = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-extract-'));
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.from(outside), 'link', { mode: 0o120777 });
    zip.addBuffer(Buffer.from('through the link'), 'link/file.txt');
    zip.addBuffer(Buffer.from('fine'), 'sub/dir/ok.txt');
    zip.end();
    const parts: Buffer[] = [];
    for await (const chunk of zip.outputStream) parts.push(chunk as Buffer);
    const archive = path.join(root, 'slip.zip');
    fs.writeFileSync(archive, Buffer.concat(parts));
    const owner = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
    await extractZip(archive, target, owner);
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.readFileSync(path.join(target, 'sub/dir/ok.txt'), 'utf8')).toBe('fine');
    if (owner)
      for (const p of ['sub', 'sub/dir', 'sub/dir/ok.txt'])
        expect(fs.statSync(path.join(target, p)).uid).toBe(65534);
    fs.rmSync(outside, { recursive: true, force: true });
    fs.rmSync(target, { recursive: true, force: true });
  });
});
