import type { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../core/errors.js';
import type { CoreDeps, ServiceRegistry } from '../core/family.js';
import type { ArtifactReportReader } from '../job_artifacts/contracts.js';
import { headPipelineSql } from '../merge_request_pipelines/merge-request-pipelines.sql.js';
import type { Job } from '../pipelines/pipeline.entity.js';
import type { ProjectView } from '../projects/projects.service.js';
import { SecretBox } from '../remote_mirrors/secret-box.js';
import type { RunnerJobPayloadExtension, RunnerVariable } from '../runner_jobs/contracts.js';
import type { TestStatus } from './junit-parser.js';
import { REPORT_FILE_TYPES, ReportIngest } from './report-ingest.js';
import {
  buildSuites,
  compareSuites,
  type StoredSuiteResult,
  type StoredTestCase,
  type SuiteComparison,
  type TestSuite,
} from './test-reports.js';

export type CiReportsDeps = Pick<ServiceRegistry, 'planLimits' | 'pipelines' | 'mergeRequests'>;

export interface PipelineTestReport {
  pipelineId: number;
  suites: Map<string, TestSuite>;
  /** Each suite's jobs (GitLab's `build_ids`), and the stored per-job results. */
  results: StoredSuiteResult[];
}

export interface MergeRequestTestComparison {
  suites: SuiteComparison[];
}

/** GitLab's widget says this as `status_reason`; the API says it as its errors do. */
const NO_REPORTS = () => new ApiError(400, { message: 'This merge request does not have test reports' });

interface ResultRow {
  job_id: number;
  suite_name: string;
  success_count: number;
  failed_count: number;
  skipped_count: number;
  error_count: number;
  total_time: number;
  suite_error: string | null;
}

interface CaseRow {
  job_id: number;
  status: TestStatus;
  case_key: string;
  name: string | null;
  classname: string | null;
  file: string | null;
  execution_time: number;
  system_output: string | null;
  attachment: string | null;
}

/**
 * What jobs' report artifacts feed: the artifacts family hands each uploaded report to `reader`; the
 * runner payload takes the dotenv variables of a job's dependencies from `payload`; the API reads
 * pipelines' test reports and merge requests' test comparisons.
 */
export class CiReportsService {
  private readonly dataSource: DataSource;
  private readonly secrets: SecretBox;
  private readonly ingest: ReportIngest;

  /** The `artifactReports` contribution. */
  readonly reader: ArtifactReportReader;
  /** The `runnerJobPayload` contribution. */
  readonly payload: RunnerJobPayloadExtension;

  constructor(
    core: CoreDeps,
    private readonly deps: CiReportsDeps,
  ) {
    this.dataSource = core.dataSource;
    this.secrets = SecretBox.fromConfig(core.config);
    this.ingest = new ReportIngest(deps.planLimits, this.secrets, core.logger);
    this.reader = {
      fileTypes: REPORT_FILE_TYPES,
      accept: (manager, report) => this.ingest.accept(manager, report),
    };
    this.payload = {
      variables: (manager, job, dependencies) => this.dependencyVariables(manager, job, dependencies),
    };
  }

  /**
   * GitLab's `dependency_variables`: the dotenv variables of the jobs this one depends on (those whose
   * artifacts it receives), in the order of the dependencies, a later one winning for the same key.
   */
  async dependencyVariables(
    manager: EntityManager,
    _job: Job,
    dependencies: readonly Job[],
  ): Promise<RunnerVariable[]> {
    if (dependencies.length === 0) return [];
    const ids = dependencies.map((d) => d.id);
    const rows = (await manager.query(
      `SELECT job_id, key, encrypted_value FROM ci_job_dotenv_variables WHERE job_id = ANY($1::int[])
       ORDER BY array_position($1::int[], job_id), position`,
      [ids],
    )) as Array<{ key: string; encrypted_value: string }>;
    return rows.map((row) => ({
      key: row.key,
      value: this.secrets.open(row.encrypted_value),
      public: false,
      masked: false,
    }));
  }

  /** The stored test results of a pipeline's latest jobs. */
  private async load(manager: EntityManager, pipelineId: number): Promise<PipelineTestReport> {
    const resultRows = (await manager.query(
      `SELECT r.job_id, r.suite_name, r.success_count, r.failed_count, r.skipped_count, r.error_count,
         r.total_time, r.suite_error
       FROM ci_test_suite_results r JOIN ci_builds b ON b.id = r.job_id AND NOT b.retried
       WHERE r.pipeline_id = $1 ORDER BY r.job_id`,
      [pipelineId],
    )) as ResultRow[];
    const caseRows = (await manager.query(
      `SELECT c.job_id, c.status, c.case_key, c.name, c.classname, c.file, c.execution_time,
         c.system_output, c.attachment
       FROM ci_test_cases c JOIN ci_builds b ON b.id = c.job_id AND NOT b.retried
       WHERE c.pipeline_id = $1 ORDER BY c.job_id, c.position`,
      [pipelineId],
    )) as CaseRow[];
    const results: StoredSuiteResult[] = resultRows.map((r) => ({
      jobId: r.job_id,
      suiteName: r.suite_name,
      counts: {
        success: r.success_count,
        failed: r.failed_count,
        skipped: r.skipped_count,
        error: r.error_count,
      },
      totalTime: Number(r.total_time),
      suiteError: r.suite_error,
    }));
    const cases: StoredTestCase[] = caseRows.map((c) => ({
      jobId: c.job_id,
      status: c.status,
      key: c.case_key,
      name: c.name,
      classname: c.classname,
      file: c.file,
      executionTime: Number(c.execution_time),
      systemOutput: c.system_output,
      attachment: c.attachment,
    }));
    return { pipelineId, suites: buildSuites(results, cases), results };
  }

  /** A pipeline's full test report (`GET …/test_report`); 404 for a pipeline not in the project. */
  async testReport(view: ProjectView, pipelineId: number): Promise<PipelineTestReport> {
    const pipeline = await this.deps.pipelines.find(view, pipelineId);
    return this.load(this.dataSource.manager, pipeline.id);
  }

  /** A pipeline's per-job results only (`GET …/test_report_summary`). */
  async testReportSummary(view: ProjectView, pipelineId: number): Promise<StoredSuiteResult[]> {
    const pipeline = await this.deps.pipelines.find(view, pipelineId);
    const { results } = await this.load(this.dataSource.manager, pipeline.id);
    return results;
  }

  /**
   * A merge request's test reports compared: its head pipeline's against its base pipeline's (the
   * target branch's newest pipeline for the merge base of the latest diff). 400 when there is no head
   * pipeline or it has no test reports.
   */
  async mergeRequestComparison(view: ProjectView, iid: number): Promise<MergeRequestTestComparison> {
    const mr = await this.deps.mergeRequests.find(view, iid);
    const manager = this.dataSource.manager;
    const [head] = (await manager.query(
      `SELECT hp.id FROM merge_requests mr JOIN LATERAL ${headPipelineSql('mr')} hp ON true WHERE mr.id = $1`,
      [mr.id],
    )) as Array<{ id: number }>;
    if (!head) throw NO_REPORTS();
    const headReport = await this.load(manager, head.id);
    if (headReport.results.length === 0) throw NO_REPORTS();
    const [base] = (await manager.query(
      `SELECT p.id FROM ci_pipelines p
       WHERE p.project_id = $1 AND p.ref = $2 AND NOT p.tag AND p.source <> 'parent_pipeline'
         AND p.sha = (SELECT d.base_commit_sha FROM merge_request_diffs d WHERE d.merge_request_id = $3
                      ORDER BY d.id DESC LIMIT 1)
       ORDER BY p.id DESC LIMIT 1`,
      [mr.targetProjectId, mr.targetBranch, mr.id],
    )) as Array<{ id: number }>;
    const baseSuites = base ? (await this.load(manager, base.id)).suites : new Map<string, TestSuite>();
    return { suites: compareSuites(headReport.suites, baseSuites) };
  }
}
