/**
 * What report artifacts feed: the readers are given uploads as the artifacts family gives them (a Job
 * row, the uploaded file on disk), and the API, python-gitlab and the runner payload read the results.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { AccessLevel } from '../../src/core/access-level.js';
import type { Caller } from '../../src/core/auth.js';
import { ApiError } from '../../src/core/errors.js';
import type { UploadedReport } from '../../src/job_artifacts/contracts.js';
import { Job } from '../../src/pipelines/pipeline.entity.js';
import type { Project } from '../../src/projects/project.entity.js';
import type { JobTokenReach } from '../../src/runner_jobs/contracts.js';
import { pythonGitlab, runPythonClient } from '../helpers/clients.js';
import { pipelineHelpers } from '../helpers/pipelines.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();
const ci = pipelineHelpers(server);
type Json = Record<string, unknown>;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-reports-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const CONFIG = `stages: [test, deploy]
rspec:
  stage: test
  parallel: 2
  script: echo
lint:
  stage: test
  script: echo
deploy:
  stage: deploy
  script: echo
`;

let files = 0;
/** Hands `content` to the readers as the artifacts family would, in a transaction. */
async function upload(job: Job, fileType: string, content: string, format: 'gzip' | 'raw' = 'gzip') {
  const data = format === 'gzip' ? gzipSync(content) : Buffer.from(content);
  const file = path.join(dir, `report-${++files}`);
  fs.writeFileSync(file, data);
  const report: UploadedReport = { job, artifactId: files, fileType, format, path: file, size: data.length };
  const reader = server.services.ciReports.reader;
  expect(reader.fileTypes).toContain(fileType);
  await server.dataSource.transaction((tx) => reader.accept(tx, report));
}

async function world(config = CONFIG) {
  const { owner, project } = await server.factories.ownedProjectWithReadme();
  const reporter = await server.factories.memberOf(project, AccessLevel.Reporter);
  const sha = await ci.commit(owner.token, project, { '.gitlab-ci.yml': config });
  const pipeline = await ci.pipelineFor(owner.token, project, sha);
  const jobs = await jobsOf(project, pipeline.id);
  return { owner, reporter, project, sha, pipeline, jobs };
}

async function jobsOf(project: Project, pipelineId: number) {
  const rows = await server.dataSource.getRepository(Job).findBy({ projectId: project.id, pipelineId });
  return Object.fromEntries(rows.map((job) => [job.name, job]));
}

const junit = (cases: string, suite = 'spec') =>
  `<?xml version="1.0"?><testsuites><testsuite name="${suite}">${cases}</testsuite></testsuites>`;

describe('pipeline test reports', () => {
  it('reports the latest jobs’ JUnit results, a suite per job group, with GitLab’s shapes', async () => {
    const { reporter, project, pipeline, jobs } = await world();
    await upload(
      jobs['rspec 1/2'],
      'junit',
      junit(
        '<testcase classname="a" name="fast" time="0.5"/>' +
          '<testcase classname="a" name="slow" time="2"/>' +
          '<testcase classname="a" name="broken" time="1"><failure message="m">expected 1</failure>' +
          '<system-out>[[ATTACHMENT|shots/broken.png]]</system-out></testcase>',
      ),
    );
    await upload(
      jobs['rspec 2/2'],
      'junit',
      junit(
        '<testcase classname="b" name="skip"><skipped/></testcase><testcase name="err"><error/></testcase>',
      ),
    );
    await upload(jobs.lint, 'junit', 'this is not XML');
    const base = `/projects/${project.id}/pipelines/${pipeline.id}`;
    const report = await ci.get(reporter.token, `${base}/test_report`);
    expect(report).toMatchObject({
      total_time: 3.5,
      total_count: 5,
      success_count: 2,
      failed_count: 1,
      skipped_count: 1,
      error_count: 1,
    });
    const suites = report.test_suites as Json[];
    expect(suites.map((s) => [s.name, s.total_count, s.suite_error])).toEqual([
      ['rspec', 5, null],
      ['lint', 0, 'JUnit XML parsing failed: Document is empty'],
    ]);
    const cases = suites[0].test_cases as Json[];
    expect(cases.map((c) => [c.status, c.name])).toEqual([
      ['error', 'err'],
      ['failed', 'broken'],
      ['success', 'slow'],
      ['success', 'fast'],
      ['skipped', 'skip'],
    ]);
    expect(cases[1]).toEqual({
      status: 'failed',
      name: 'broken',
      classname: 'a',
      file: null,
      execution_time: 1,
      system_output: 'expected 1\n\nSystem Out:\n\n[[ATTACHMENT|shots/broken.png]]',
      stack_trace: null,
      recent_failures: null,
      attachment_url: `${server.url}/${project.namespace!.fullPath}/${project.path}/-/jobs/${jobs['rspec 1/2'].id}/artifacts/file/shots/broken.png`,
    });
    expect(suites[1].test_cases).toEqual([]);

    const summary = await ci.get(reporter.token, `${base}/test_report_summary`);
    expect(summary).toEqual({
      total: {
        time: 3.5,
        count: 5,
        success: 2,
        failed: 1,
        skipped: 1,
        error: 1,
        suite_error: 'JUnit XML parsing failed: Document is empty',
      },
      test_suites: [
        {
          name: 'rspec',
          total_time: 3.5,
          total_count: 5,
          success_count: 2,
          failed_count: 1,
          skipped_count: 1,
          error_count: 1,
          build_ids: [jobs['rspec 1/2'].id, jobs['rspec 2/2'].id],
          suite_error: null,
        },
        {
          name: 'lint',
          total_time: 0,
          total_count: 0,
          success_count: 0,
          failed_count: 0,
          skipped_count: 0,
          error_count: 0,
          build_ids: [jobs.lint.id],
          suite_error: 'JUnit XML parsing failed: Document is empty',
        },
      ],
    });
  });

  it('answers zeros for a pipeline without reports, 404 for another project’s pipeline', async () => {
    const { reporter, project, pipeline } = await world();
    const report = await ci.get(
      reporter.token,
      `/projects/${project.id}/pipelines/${pipeline.id}/test_report`,
    );
    expect(report).toEqual({
      total_time: 0,
      total_count: 0,
      success_count: 0,
      failed_count: 0,
      skipped_count: 0,
      error_count: 0,
      test_suites: [],
    });
    const other = await world();
    const res = await server.request(
      'GET',
      `/projects/${other.project.id}/pipelines/${pipeline.id}/test_report_summary`,
      {
        token: other.owner.token,
      },
    );
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: '404 Not found' });
    const outsider = await server.factories.user();
    const hidden = await server.request(
      'GET',
      `/projects/${project.id}/pipelines/${pipeline.id}/test_report`,
      {
        token: outsider.token,
      },
    );
    expect(hidden.status).toBe(404);
  });

  it('replaces a job’s results when it uploads again, and leaves out retried jobs', async () => {
    const { reporter, project, pipeline, jobs } = await world();
    await upload(jobs.lint, 'junit', junit('<testcase name="one"/><testcase name="two"/>'));
    await upload(
      jobs.lint,
      'junit',
      junit(
        '<testcase name="three" time="1"/><testcase name="three" time="2"/><testcase name="three"><skipped/></testcase>',
      ),
    );
    const base = `/projects/${project.id}/pipelines/${pipeline.id}`;
    const report = await ci.get(reporter.token, `${base}/test_report`);
    // The same case twice with one status is kept once, the later one; with another status it is another.
    expect(
      ((report.test_suites as Json[])[0].test_cases as Json[]).map((c) => [
        c.name,
        c.status,
        c.execution_time,
      ]),
    ).toEqual([
      ['three', 'success', 2],
      ['three', 'skipped', 0],
    ]);
    expect(report).toMatchObject({ total_count: 2, total_time: 3 });
    await server.dataSource.getRepository(Job).update({ id: jobs.lint.id }, { retried: true });
    expect((await ci.get(reporter.token, `${base}/test_report`)).total_count).toBe(0);
  });

  it.skipIf(!pythonGitlab)('is read by python-gitlab (needs Debian python3-gitlab)', async () => {
    const { reporter, project, pipeline, jobs } = await world();
    await upload(jobs.lint, 'junit', junit('<testcase name="ok"/><testcase name="ko"><failure/></testcase>'));
    const stdout = await runPythonClient('python_gitlab_test_reports.py', [
      server.url,
      reporter.token,
      String(project.id),
      String(pipeline.id),
    ]);
    expect(JSON.parse(stdout.trim())).toEqual({
      total_count: 2,
      failed_count: 1,
      suites: ['lint'],
      cases: ['ko', 'ok'],
      summary_total: 2,
      summary_suites: [['lint', 2]],
    });
  });
});

describe('merge request test reports', () => {
  it('compares the head pipeline’s tests with the base pipeline’s', async () => {
    const config = 'test:\n  script: echo\n';
    const { owner, project, pipeline: basePipeline } = await world(config);
    const baseJobs = await jobsOf(project, basePipeline.id);
    await upload(
      baseJobs.test,
      'junit',
      junit(
        '<testcase name="was_failing"><failure/></testcase><testcase name="still_failing"><failure/></testcase>' +
          '<testcase name="will_break"/><testcase name="was_error"><error/></testcase>',
      ),
    );
    const headSha = await ci.commit(
      owner.token,
      project,
      { 'feature.txt': 'x' },
      { branch: 'feature', from: 'main' },
    );
    const headPipeline = await ci.pipelineFor(owner.token, project, headSha);
    const created = await server.request('POST', `/projects/${project.id}/merge_requests`, {
      token: owner.token,
      json: { source_branch: 'feature', target_branch: 'main', title: 'Feature' },
    });
    expect(created.status, created.text).toBe(201);
    const iid = (created.body as Json).iid as number;
    const url = `/projects/${project.id}/merge_requests/${iid}/test_reports`;

    const none = await server.request('GET', url, { token: owner.token });
    expect(none.status).toBe(400);
    expect(none.body).toEqual({ message: 'This merge request does not have test reports' });

    const headJobs = await jobsOf(project, headPipeline.id);
    await upload(
      headJobs.test,
      'junit',
      junit(
        '<testcase name="was_failing"/><testcase name="still_failing"><failure>again</failure></testcase>' +
          '<testcase name="will_break"><failure/></testcase><testcase name="was_error"/>' +
          '<testcase name="new_error"><error/></testcase>',
      ),
    );
    const res = await server.request('GET', url, { token: owner.token });
    expect(res.status, res.text).toBe(200);
    const body = res.body as Json;
    expect(body).toMatchObject({
      status: 'failed',
      summary: { total: 5, resolved: 2, errored: 1, failed: 2 },
    });
    const [suite] = body.suites as Json[];
    const names = (key: string) => (suite[key] as Json[]).map((c) => c.name);
    expect(suite).toMatchObject({ name: 'test', status: 'failed', suite_errors: { head: null, base: null } });
    expect(names('new_failures')).toEqual(['will_break']);
    expect(names('existing_failures')).toEqual(['still_failing']);
    expect(names('resolved_failures')).toEqual(['was_failing']);
    expect(names('new_errors')).toEqual(['new_error']);
    expect(names('existing_errors')).toEqual([]);
    expect(names('resolved_errors')).toEqual(['was_error']);

    const missing = await server.request('GET', `/projects/${project.id}/merge_requests/999/test_reports`, {
      token: owner.token,
    });
    expect(missing.status).toBe(404);
  });
});

describe('dotenv reports', () => {
  it('gives a job’s variables to the jobs that depend on it, sealed at rest', async () => {
    const { jobs } = await world();
    await upload(jobs.lint, 'dotenv', 'BUILD_VERSION=1.2.3\nURL=https://x.test/?a=b\n');
    await upload(jobs['rspec 1/2'], 'dotenv', 'BUILD_VERSION=2.0\nOTHER=yes\n');
    const stored = (await server.dataSource.query(
      'SELECT encrypted_value FROM ci_job_dotenv_variables WHERE job_id = $1',
      [jobs.lint.id],
    )) as Array<{ encrypted_value: string }>;
    expect(stored.map((r) => r.encrypted_value).join()).not.toContain('1.2.3');
    const payload = server.services.ciReports.payload;
    const variables = await payload.variables!(server.dataSource.manager, jobs.deploy, [
      jobs.lint,
      jobs['rspec 1/2'],
    ]);
    expect(variables).toEqual([
      { key: 'BUILD_VERSION', value: '1.2.3', public: false, masked: false },
      { key: 'URL', value: 'https://x.test/?a=b', public: false, masked: false },
      { key: 'BUILD_VERSION', value: '2.0', public: false, masked: false },
      { key: 'OTHER', value: 'yes', public: false, masked: false },
    ]);
    expect(await payload.variables!(server.dataSource.manager, jobs.deploy, [])).toEqual([]);
  });

  it('refuses an invalid file with GitLab’s message, and enforces the plan limits', async () => {
    const { jobs } = await world();
    const refusal = async (content: string) => {
      try {
        await upload(jobs.lint, 'dotenv', content);
      } catch (err) {
        expect(err).toBeInstanceOf(ApiError);
        return [(err as ApiError).status, (err as ApiError).body];
      }
      return 'accepted';
    };
    expect(await refusal('NOT VALID')).toEqual([400, { message: 'Invalid Format' }]);
    expect(await refusal('A-B=1')).toEqual([
      400,
      { message: "Validation failed: Key can contain only letters, digits and '_'." },
    ]);
    await server.services.planLimits.update('default', { dotenv_variables: 2 });
    try {
      expect(await refusal('A=1\nB=2\nC=3')).toEqual([
        400,
        { message: 'Dotenv files cannot have more than 2 variables' },
      ]);
      await server.services.planLimits.update('default', { dotenv_size: 30 });
      const big = `A=${'x'.repeat(200)}${Math.random()}`;
      expect(await refusal(big)).toEqual([
        400,
        { message: 'Dotenv Artifact Too Big. Maximum Allowable Size: 30' },
      ]);
    } finally {
      await server.services.planLimits.update('default', { dotenv_variables: 20, dotenv_size: 5120 });
    }
    const [{ count }] = (await server.dataSource.query(
      'SELECT count(*)::int AS count FROM ci_job_dotenv_variables WHERE job_id = $1',
      [jobs.lint.id],
    )) as Array<{ count: number }>;
    expect(count).toBe(0);
  });
});

describe('coverage and security reports', () => {
  it('keeps a Cobertura report’s line coverage and line hits per job', async () => {
    const { jobs } = await world();
    await upload(
      jobs.lint,
      'cobertura',
      `<?xml version="1.0"?><!DOCTYPE coverage SYSTEM "http://cobertura.sourceforge.net/xml/coverage-04.dtd">
      <coverage line-rate="0.6667" lines-covered="2" lines-valid="3"><packages><package name="app"><classes>
      <class name="a" filename="app/a.rb"><methods/><lines><line number="1" hits="3"/><line number="2" hits="0"/></lines></class>
      <class name="b" filename="app/b.rb"><lines><line number="5" hits="1"/></lines></class>
      </classes></package></packages></coverage>`,
    );
    const [row] = (await server.dataSource.query(
      'SELECT line_rate, lines_covered, lines_valid, files FROM ci_job_coverage_reports WHERE job_id = $1',
      [jobs.lint.id],
    )) as Json[];
    expect(row).toEqual({
      line_rate: '66.67',
      lines_covered: 2,
      lines_valid: 3,
      files: { 'app/a.rb': { 1: 3, 2: 0 }, 'app/b.rb': { 5: 1 } },
    });
    await upload(jobs['rspec 1/2'], 'cobertura', 'not xml');
    const none = (await server.dataSource.query('SELECT 1 FROM ci_job_coverage_reports WHERE job_id = $1', [
      jobs['rspec 1/2'].id,
    ])) as Json[];
    expect(none).toEqual([]);
  });

  const scan = (type: string) => ({
    analyzer: { id: 'semgrep', name: 'Semgrep', version: '1.0.0', vendor: { name: 'GitLab' } },
    scanner: { id: 'semgrep', name: 'Semgrep', version: '1.0.0', vendor: { name: 'GitLab' } },
    type,
    start_time: '2026-01-01T00:00:00',
    end_time: '2026-01-01T00:01:00',
    status: 'success',
  });

  it('validates security reports against the report format, ingesting only valid ones', async () => {
    const { jobs } = await world();
    const sast = {
      version: '15.0.7',
      scan: scan('sast'),
      vulnerabilities: [
        {
          id: 'f1',
          name: 'SQL injection',
          severity: 'High',
          identifiers: [{ type: 'cwe', name: 'CWE-89', value: '89' }],
          location: { file: 'app/a.rb', start_line: 3 },
        },
      ],
    };
    await upload(jobs.lint, 'sast', JSON.stringify(sast), 'raw');
    const secret = {
      version: '15.0.4',
      scan: scan('secret_detection'),
      vulnerabilities: [{ id: 'x', location: {} }],
    };
    await upload(jobs.lint, 'secret_detection', JSON.stringify(secret), 'raw');
    await upload(jobs.lint, 'dependency_scanning', JSON.stringify({ ...sast, version: '14.1.0' }), 'raw');
    await upload(jobs.lint, 'container_scanning', '{not json', 'raw');
    const reports = (await server.dataSource.query(
      `SELECT report_type, schema_version, valid, errors, warnings,
         (SELECT count(*)::int FROM ci_security_findings f WHERE f.report_id = r.id) AS findings
       FROM ci_security_reports r WHERE job_id = $1 ORDER BY id`,
      [jobs.lint.id],
    )) as Json[];
    expect(reports.map((r) => [r.report_type, r.valid, r.findings])).toEqual([
      ['sast', true, 1],
      ['secret_detection', false, 0],
      ['dependency_scanning', false, 0],
      ['container_scanning', false, 0],
    ]);
    expect(reports[1].warnings).toEqual([
      "This report uses a supported MAJOR.MINOR schema version but the PATCH version doesn't match any vendored schema version. Validation will be attempted against version 15.0.7",
    ]);
    expect(reports[1].errors).toEqual([
      "property '/vulnerabilities/0' is missing required keys: identifiers",
      "property '/vulnerabilities/0/location' is missing required keys: commit",
    ]);
    const dependency = reports[2].errors as string[];
    expect(dependency[0]).toMatch(/^Version 14\.1\.0 for report type dependency_scanning is unsupported/);
    expect(dependency).toContain('root is missing required keys: dependency_files');
    expect(reports[3].errors).toEqual(['JSON parsing failed']);
    const [finding] = (await server.dataSource.query(
      'SELECT uuid, name, severity, primary_identifier, location FROM ci_security_findings WHERE pipeline_id = $1',
      [jobs.lint.pipelineId],
    )) as Json[];
    expect(finding).toEqual({
      uuid: 'f1',
      name: 'SQL injection',
      severity: 'High',
      primary_identifier: { type: 'cwe', name: 'CWE-89', value: '89' },
      location: { file: 'app/a.rb', start_line: 3 },
    });
  });
});

describe('through the artifacts upload', () => {
  /** The caller a running job's token stands for (what the runner_jobs family resolves). */
  const jobCaller = (job: Job, userId: number): Caller => ({
    user: null,
    token: null,
    reach: {
      kind: 'ci_job_token',
      jobId: job.id,
      pipelineId: job.pipelineId,
      projectId: job.projectId,
      userId,
      check: async () => undefined,
    } as JobTokenReach,
  });
  const spooled = (content: Buffer, filename: string) => {
    const file = path.join(dir, `upload-${++files}`);
    fs.writeFileSync(file, content);
    return { path: file, filename, mimeType: 'application/octet-stream', size: content.length };
  };

  it('feeds the test report and the dependent jobs’ variables, and refuses an invalid dotenv', async () => {
    const { owner, reporter, project, pipeline, jobs } = await world();
    const lint = jobs.lint;
    await ci.run(lint.id, 'running');
    const upload = (content: string, type: string, filename: string) =>
      server.services.jobArtifacts.upload(
        jobCaller(lint, owner.user.id),
        lint.id,
        spooled(gzipSync(content), filename),
        { artifact_type: type, artifact_format: 'gzip' },
      );
    await upload(
      junit('<testcase name="passes"/><testcase name="fails"><failure/></testcase>'),
      'junit',
      'junit.xml.gz',
    );
    // The refusal rolls the upload back: the job may upload a valid file afterwards.
    await expect(upload('not a variable\n', 'dotenv', '.env.gz')).rejects.toMatchObject({
      status: 400,
      body: { message: 'Invalid Format' },
    });
    await upload('VERSION=3.1\n', 'dotenv', '.env.gz');
    const report = await ci.get(
      reporter.token,
      `/projects/${project.id}/pipelines/${pipeline.id}/test_report`,
    );
    expect(report).toMatchObject({ total_count: 2, failed_count: 1, test_suites: [{ name: 'lint' }] });
    const variables = await server.services.ciReports.payload.variables!(
      server.dataSource.manager,
      jobs.deploy,
      [lint],
    );
    expect(variables).toEqual([{ key: 'VERSION', value: '3.1', public: false, masked: false }]);
  });
});
