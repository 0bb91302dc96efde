/**
 * Job artifacts' speed (issue 26): a 200 MB archive uploaded through `POST /jobs/:id/artifacts` and
 * downloaded through `GET /projects/:id/jobs/:job_id/artifacts`, each beside a plain `cp` of the same
 * file on the same disk (goal: at least 50% of its speed); then one file out of a 10,000-file archive
 * (`GET /projects/:id/jobs/:job_id/artifacts/*path`, goal: at most 20 ms).
 *
 * A benchmark, not a test: it prints numbers and never fails on one; it exits non-zero only when the
 * harness breaks. Everything talks to 127.0.0.1.
 *
 * Env: BENCH_PG_URL (administrative PostgreSQL URL, default postgres://postgres@127.0.0.1:5432/postgres;
 * PGlite when it does not answer), ARTIFACT_BENCH_MB (archive size, 200), ARTIFACT_BENCH_FILES (10000),
 * ARTIFACT_BENCH_READS (single-file reads, 300), BENCH_TMP (where the data directory goes, os.tmpdir()).
 * Run: node --import tsx scripts/bench/artifacts.ts
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { get as httpGet, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import yazl from 'yazl';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { hashToken } from '../../src/core/auth.js';
import { createHttpServer } from '../../src/core/http.js';
import { createDataSource, migrate } from '../../src/db/data-source.js';
import { databaseModel } from '../../src/families.js';
import { createLogger } from '../../src/logger.js';
import { Factories } from '../../test/helpers/factories.js';

const MB = Number(process.env.ARTIFACT_BENCH_MB ?? 200);
const FILES = Number(process.env.ARTIFACT_BENCH_FILES ?? 10_000);
const READS = Number(process.env.ARTIFACT_BENCH_READS ?? 300);
const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const print = (line: string) => process.stdout.write(`${line}\n`);

/** A fresh PostgreSQL database, or PGlite in memory when PostgreSQL does not answer. */
async function database(): Promise<{ url?: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch {
    print('PostgreSQL does not answer: PGlite in memory');
    return { drop: async () => undefined };
  }
  const name = `forge_bench_artifacts_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A zip of stored (not compressed) random bytes of about `mb` MB, written to `file`. */
async function bigZip(file: string, mb: number) {
  const zip = new yazl.ZipFile();
  const chunk = crypto.randomBytes(1024 * 1024);
  const body = Readable.from(
    (function* () {
      for (let i = 0; i < mb; i++) yield chunk;
    })(),
  );
  zip.addReadStream(body, 'big.bin', { compress: false, size: mb * 1024 * 1024 });
  zip.end();
  await pipeline(zip.outputStream, fs.createWriteStream(file));
}

/** A zip of `count` small text files under nested directories. */
async function manyFilesZip(file: string, count: number) {
  const zip = new yazl.ZipFile();
  for (let i = 0; i < count; i++)
    zip.addBuffer(Buffer.from(`file ${i}\n`.repeat(20)), `dir${i % 50}/sub${i % 7}/file-${i}.txt`);
  zip.end();
  await pipeline(zip.outputStream, fs.createWriteStream(file));
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const rate = (bytes: number, ms: number) => `${(bytes / 1024 / 1024 / (ms / 1000)).toFixed(0)} MB/s`;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] as number;

/** Times `cp` of `file` to a new file in the same directory (the floor), then removes the copy. */
function timeCp(file: string): number {
  const copy = `${file}.cp`;
  const t0 = performance.now();
  execFileSync('cp', [file, copy]);
  const ms = performance.now() - t0;
  fs.rmSync(copy, { force: true });
  return ms;
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(process.env.BENCH_TMP ?? os.tmpdir(), 'forge-bench-artifacts-'));
  const db = await database();
  // The service reads its limit from the environment (src/job_artifacts/job-artifacts.service.ts).
  process.env.FORGE_MAX_ARTIFACTS_SIZE_MB = String(MB * 2);
  const config = loadConfig({
    ...process.env,
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
  });
  const dataSource = await createDataSource({ url: db.url }, databaseModel);
  await migrate(dataSource);
  const app = await createApp({ config, dataSource, logger: createLogger('silent') });
  const http = createHttpServer(app.koa.callback(), config.bodyTimeoutSeconds).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => http.once('listening', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  config.externalUrl = url;
  const api = `${url}/api/v4`;
  try {
    const factories = new Factories(dataSource, app.services);
    const owner = await factories.user({ admin: true });
    const project = await factories.projectWithReadme({ owner });
    const ci = 'big:\n  script: x\nmany:\n  script: y\n';
    const committed = await fetch(`${api}/projects/${project.id}/repository/commits`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': owner.token, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        branch: 'main',
        commit_message: 'CI',
        actions: [{ action: 'create', file_path: '.gitlab-ci.yml', content: ci }],
      }),
    });
    if (committed.status !== 201) throw new Error(`commit: ${committed.status} ${await committed.text()}`);
    const runnerToken = `glrt-${crypto.randomBytes(12).toString('hex')}`;
    const [runner] = (await dataSource.query(
      `INSERT INTO ci_runners (runner_type, token_digest, registration_type) VALUES ('project_type', $1, 'authenticated_user') RETURNING id`,
      [hashToken(runnerToken)],
    )) as Array<{ id: number }>;
    await dataSource.query('INSERT INTO ci_runner_projects (runner_id, project_id) VALUES ($1, $2)', [
      runner.id,
      project.id,
    ]);
    const jobs = new Map<string, { id: number; token: string }>();
    for (let attempt = 0; attempt < 600 && jobs.size < 2; attempt++) {
      const res = await fetch(`${api}/jobs/request`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token: runnerToken, info: { name: 'bench' } }),
      });
      if (res.status === 201) {
        const job = (await res.json()) as { id: number; token: string; job_info: { name: string } };
        jobs.set(job.job_info.name, job);
      } else await sleep(100);
    }
    const big = jobs.get('big');
    const many = jobs.get('many');
    if (!big || !many) throw new Error('the runner got no jobs');

    /** A multipart upload streamed from the file with node's http client, as a runner streams it. */
    const upload = async (job: { id: number; token: string }, file: string) => {
      const boundary = `----forge${crypto.randomBytes(8).toString('hex')}`;
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="artifacts.zip"\r\n` +
          'Content-Type: application/zip\r\n\r\n',
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const length = head.length + fs.statSync(file).size + tail.length;
      const t0 = performance.now();
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          `${api}/jobs/${job.id}/artifacts?expire_in=never`,
          {
            method: 'POST',
            headers: {
              'JOB-TOKEN': job.token,
              'Content-Type': `multipart/form-data; boundary=${boundary}`,
              'Content-Length': String(length),
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.write(head);
        const body = fs.createReadStream(file, { highWaterMark: 1024 * 1024 });
        body.on('error', reject);
        body.on('end', () => req.end(tail));
        body.pipe(req, { end: false });
      });
      if (status !== 201) throw new Error(`upload: ${status}`);
      return performance.now() - t0;
    };

    // 200 MB: upload, download, and cp of the same file on the same disk.
    const bigFile = path.join(dataDir, 'big.zip');
    await bigZip(bigFile, MB);
    const size = fs.statSync(bigFile).size;
    timeCp(bigFile); // warms the page cache as the upload's read will find it
    const cpMs = timeCp(bigFile);
    const uploadMs = await upload(big, bigFile);
    const out = path.join(dataDir, 'downloaded.zip');
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      httpGet(
        `${api}/projects/${project.id}/jobs/${big.id}/artifacts`,
        { headers: { 'PRIVATE-TOKEN': owner.token } },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`download: ${res.statusCode}`));
          else pipeline(res, fs.createWriteStream(out)).then(resolve, reject);
        },
      ).on('error', reject);
    });
    const downloadMs = performance.now() - t0;
    if (fs.statSync(out).size !== size) throw new Error('the download is not the upload');
    print(
      `job artifacts: ${(size / 1024 / 1024).toFixed(0)} MB archive, object store ${app.services.jobArtifacts.store.kind}`,
    );
    print(`  cp (same disk)  ${seconds(cpMs)}  ${rate(size, cpMs)}`);
    print(
      `  upload          ${seconds(uploadMs)}  ${rate(size, uploadMs)}  ${((cpMs / uploadMs) * 100).toFixed(0)}% of cp (goal >= 50%)`,
    );
    print(
      `  download        ${seconds(downloadMs)}  ${rate(size, downloadMs)}  ${((cpMs / downloadMs) * 100).toFixed(0)}% of cp (goal >= 50%)`,
    );

    // One file out of a 10,000-file archive.
    const manyFile = path.join(dataDir, 'many.zip');
    await manyFilesZip(manyFile, FILES);
    const manyUploadMs = await upload(many, manyFile);
    const times: number[] = [];
    for (let i = 0; i < READS; i++) {
      const n = Math.floor(Math.random() * FILES);
      const entry = encodeURIComponent(`dir${n % 50}/sub${n % 7}/file-${n}.txt`);
      const r0 = performance.now();
      const one = await fetch(`${api}/projects/${project.id}/jobs/${many.id}/artifacts/${entry}`, {
        headers: { 'PRIVATE-TOKEN': owner.token },
      });
      const text = await one.text();
      times.push(performance.now() - r0);
      if (one.status !== 200 || !text.startsWith(`file ${n}\n`)) throw new Error(`file ${n}: ${one.status}`);
    }
    print(`  ${FILES}-file archive uploaded (and indexed) in ${seconds(manyUploadMs)}`);
    print(
      `  one file of it  median ${pct(times, 50).toFixed(1)} ms  p95 ${pct(times, 95).toFixed(1)} ms  p99 ${pct(times, 99).toFixed(1)} ms  (${READS} reads, goal <= 20 ms)`,
    );
  } finally {
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await app.stop();
    await dataSource.destroy();
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
