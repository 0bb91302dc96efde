/** What the job artifacts tests share: zips, spooled uploads, and a project whose pipeline kept artifacts. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yazl from 'yazl';
import { hashToken, type Caller } from '../../src/core/auth.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { JobTokenReach } from '../../src/runner_jobs/contracts.js';
import { pipelineHelpers } from './pipelines.js';
import type { TestServer } from './server.js';

/** A zip of `files` (name → content), as a runner's archive. */
export function zipOf(files: Record<string, string | Buffer>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files))
    zip.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name);
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'forge-artifacts-test-'));
let counter = 0;
export const spooled = (content: Buffer, filename = 'artifacts.zip') => {
  const file = path.join(tmp, `upload-${++counter}`);
  fs.writeFileSync(file, content);
  return { path: file, filename, mimeType: 'application/octet-stream', size: content.length };
};

/** The caller a running job's token stands for (what the runner_jobs family resolves). */
export const jobCaller = (
  project: Project,
  job: { id: number; pipeline_id?: number },
  userId: number,
): Caller => ({
  user: null,
  token: null,
  reach: {
    kind: 'ci_job_token',
    jobId: job.id,
    pipelineId: 0,
    projectId: project.id,
    userId,
    check: async () => undefined,
  } as JobTokenReach,
});

export const CONFIG = `
stages: [build, test]
build:
  stage: build
  script: make
  artifacts:
    paths: [dist/]
test:
  stage: test
  script: make test
  artifacts:
    reports:
      junit: report.xml
`;

export function artifactHelpers(server: TestServer) {
  const { commit, pipelineFor, settle, run, byName } = pipelineHelpers(server);

  /** A project whose pipeline on main ran `build` (with an archive) and `test` (a report only). */
  async function builtProject(files: Record<string, string | Buffer> = { 'dist/app.js': 'console.log(1)' }) {
    const { owner, project } = await server.factories.ownedProjectWithReadme();
    const sha = await commit(owner.token, project, { '.gitlab-ci.yml': CONFIG });
    const pipeline = await pipelineFor(owner.token, project, sha);
    const jobs = await settle(owner.token, project, pipeline.id, { build: 'pending' });
    const build = byName(jobs, 'build');
    await run(build.id, 'running');
    const archive = await server.services.jobArtifacts.upload(
      jobCaller(project, build, owner.user.id),
      build.id,
      spooled(await zipOf(files)),
      { expire_in: '1 week' },
    );
    await run(build.id, 'success');
    const test = byName(await settle(owner.token, project, pipeline.id, { test: 'pending' }), 'test');
    await run(test.id, 'running');
    await server.services.jobArtifacts.upload(
      jobCaller(project, test, owner.user.id),
      test.id,
      spooled(Buffer.from('<testsuites/>').subarray(0), 'junit.xml.gz'),
      { artifact_type: 'junit', artifact_format: 'raw' },
    );
    await run(test.id, 'success');
    await settle(owner.token, project, pipeline.id, { build: 'success', test: 'success' });
    return { owner, project, pipeline, build, test, archive };
  }

  return { builtProject };
}

/** A project runner of `project`, registered in the database, that asks for jobs as GitLab Runner does. */
export async function projectRunner(server: TestServer, project: Project) {
  const token = `glrt-${randomBytes(12).toString('hex')}`;
  const rows: Array<{ id: number }> = await server.dataSource.query(
    `INSERT INTO ci_runners (runner_type, token_digest, registration_type, description)
     VALUES ('project_type', $1, 'authenticated_user', 'test runner') RETURNING id`,
    [hashToken(token)],
  );
  await server.dataSource.query('INSERT INTO ci_runner_projects (runner_id, project_id) VALUES ($1, $2)', [
    rows[0].id,
    project.id,
  ]);
  type RunnerJob = {
    id: number;
    token: string;
    job_info: { name: string };
    dependencies: Array<{ id: number; name: string; artifacts_file?: { filename: string; size: number } }>;
  };
  /** The next job, waiting for one to be pending. */
  async function request(): Promise<RunnerJob> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const res = await server.request('POST', '/jobs/request', { json: { token, info: { name: 'test' } } });
      if (res.status === 201) return res.body as RunnerJob;
      if (res.status !== 204) throw new Error(`jobs/request answered ${res.status}: ${res.text}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('no job came');
  }
  return { token, request };
}

/** `POST /jobs/:id/artifacts` as GitLab Runner sends it: multipart `file`, the rest in the query. */
export async function runnerUpload(
  server: TestServer,
  job: { id: number; token: string },
  content: Buffer,
  query: Record<string, string> = {},
  filename = 'artifacts.zip',
) {
  const form = new FormData();
  form.append('file', new Blob([content]), filename);
  const qs = new URLSearchParams(query).toString();
  const res = await fetch(`${server.api}/jobs/${job.id}/artifacts${qs ? `?${qs}` : ''}`, {
    method: 'POST',
    headers: { 'JOB-TOKEN': job.token },
    body: form,
  });
  return { status: res.status, text: await res.text() };
}
