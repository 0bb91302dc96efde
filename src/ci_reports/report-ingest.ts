/**
 * Reading uploaded report artifacts in the upload's transaction (the `artifactReports` point): each kind
 * is parsed from the uploaded file (gzip-compressed or raw) and what it feeds is stored in this family's
 * tables, replacing what an earlier upload of the same job stored. Only an invalid dotenv refuses the
 * upload (400, GitLab's message); an unreadable JUnit report is kept as its suite's parsing error, an
 * invalid security report with its validation errors, an unreadable coverage report not at all.
 */
import type { EntityManager } from 'typeorm';
import type { Logger } from '../logger.js';
import { ApiError } from '../core/errors.js';
import type { UploadedReport } from '../job_artifacts/contracts.js';
import type { Job } from '../pipelines/pipeline.entity.js';
import type { PlanLimitsService } from '../plan_limits/plan-limits.service.js';
import type { SecretBox } from '../remote_mirrors/secret-box.js';
import { parseCobertura } from './cobertura.js';
import { checkDotenvSize, parseDotenv } from './dotenv.js';
import { parseJunit, type ParsedTestCase } from './junit-parser.js';
import { checkSecurityReport } from './security-reports.js';
import { SECURITY_REPORT_TYPES, type SecurityReportType } from './security-schemas.js';
import { readText } from './xml-chunks.js';

export const JUNIT_TYPES = ['junit'] as const;
export const COVERAGE_TYPES = ['cobertura', 'coverage_report'] as const;
export const REPORT_FILE_TYPES = [
  ...JUNIT_TYPES,
  'dotenv',
  ...COVERAGE_TYPES,
  ...SECURITY_REPORT_TYPES,
] as const;

/** The most of a security report (uncompressed) read into memory. */
const MAX_SECURITY_REPORT_CHARS = 64 * 1024 * 1024;
/** The most of a dotenv file read once uncompressed (its compressed size is limited by `dotenv_size`). */
const MAX_DOTENV_CHARS = 1024 * 1024;

/**
 * GitLab's `test_suite_name`: a `parallel: matrix` job's own name; otherwise its group name (without a
 * ` 1/3`-like index).
 */
export function testSuiteName(job: Pick<Job, 'name' | 'options'>): string {
  const parallel = job.options?.parallel;
  if (parallel && /: \[.*\]$/.test(job.name)) return job.name;
  return job.name.replace(/([\s:]+((\[.*\])|(\d+[\s:/\\]+\d+))){1,3}\s*$/, '').trim();
}

async function readAll(report: UploadedReport, max: number): Promise<string | null> {
  let text = '';
  for await (const chunk of readText(report.path, report.format === 'gzip')) {
    text += chunk;
    if (text.length > max) return null;
  }
  return text;
}

export class ReportIngest {
  constructor(
    private readonly planLimits: PlanLimitsService,
    private readonly secrets: SecretBox,
    private readonly log: Logger,
  ) {}

  async accept(manager: EntityManager, report: UploadedReport): Promise<void> {
    const type = report.fileType;
    if (report.format === 'zip') return;
    if (type === 'junit') return this.junit(manager, report);
    if (type === 'dotenv') return this.dotenv(manager, report);
    if ((COVERAGE_TYPES as readonly string[]).includes(type)) return this.coverage(manager, report);
    if ((SECURITY_REPORT_TYPES as readonly string[]).includes(type))
      return this.security(manager, report, type as SecurityReportType);
  }

  private async junit(manager: EntityManager, report: UploadedReport): Promise<void> {
    const { job } = report;
    await manager.query('DELETE FROM ci_test_cases WHERE job_id = $1', [job.id]);
    let position = 0;
    const store = async (batch: ParsedTestCase[]) => {
      // One row per status and key in a statement: the later case, in the earlier one's place.
      const unique = new Map<string, { c: ParsedTestCase; at: number }>();
      for (const c of batch) {
        const id = `${c.status}:${c.key}`;
        unique.set(id, { c, at: unique.get(id)?.at ?? position++ });
      }
      const columns = 11;
      const params: unknown[] = [];
      const rows = [...unique.values()].map(({ c, at }, i) => {
        params.push(
          job.id,
          job.pipelineId,
          c.status,
          c.key,
          at,
          c.name,
          c.classname,
          c.file,
          c.executionTime,
          c.systemOutput,
          c.attachment,
        );
        return `(${Array.from({ length: columns }, (_, j) => `$${i * columns + j + 1}`).join(', ')})`;
      });
      await manager.query(
        `INSERT INTO ci_test_cases (job_id, pipeline_id, status, case_key, position, name, classname, file,
           execution_time, system_output, attachment) VALUES ${rows.join(', ')}
         ON CONFLICT (job_id, status, case_key) DO UPDATE SET name = EXCLUDED.name, classname = EXCLUDED.classname, file = EXCLUDED.file,
           execution_time = EXCLUDED.execution_time, system_output = EXCLUDED.system_output,
           attachment = EXCLUDED.attachment`,
        params,
      );
    };
    const result = await parseJunit(readText(report.path, report.format === 'gzip'), store);
    if (result.suiteError) await manager.query('DELETE FROM ci_test_cases WHERE job_id = $1', [job.id]);
    // A case repeated with the same status and key is kept once (GitLab's hash by key): count the rows.
    const counts = { success: 0, failed: 0, skipped: 0, error: 0 };
    const rows = (await manager.query(
      'SELECT status, count(*)::int AS count FROM ci_test_cases WHERE job_id = $1 GROUP BY status',
      [job.id],
    )) as Array<{ status: keyof typeof counts; count: number }>;
    for (const row of rows) counts[row.status] = row.count;
    await manager.query(
      `INSERT INTO ci_test_suite_results (job_id, pipeline_id, project_id, artifact_id, suite_name,
         success_count, failed_count, skipped_count, error_count, total_time, suite_error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (job_id) DO UPDATE SET artifact_id = EXCLUDED.artifact_id, suite_name = EXCLUDED.suite_name,
         success_count = EXCLUDED.success_count, failed_count = EXCLUDED.failed_count,
         skipped_count = EXCLUDED.skipped_count, error_count = EXCLUDED.error_count,
         total_time = EXCLUDED.total_time, suite_error = EXCLUDED.suite_error`,
      [
        job.id,
        job.pipelineId,
        job.projectId,
        report.artifactId,
        testSuiteName(job),
        counts.success,
        counts.failed,
        counts.skipped,
        counts.error,
        result.totalTime,
        result.suiteError,
      ],
    );
  }

  private async dotenv(manager: EntityManager, report: UploadedReport): Promise<void> {
    const limits = await this.planLimits.current(manager);
    const dotenvLimits = { size: limits.dotenv_size, variables: limits.dotenv_variables };
    checkDotenvSize(report.size, dotenvLimits);
    let content: string | null;
    try {
      content = await readAll(report, MAX_DOTENV_CHARS);
    } catch {
      throw new ApiError(400, { message: 'Invalid Format' });
    }
    if (content === null)
      throw new ApiError(400, {
        message: `Dotenv Artifact Too Big. Maximum Allowable Size: ${dotenvLimits.size}`,
      });
    const variables = parseDotenv(content, dotenvLimits);
    await manager.query('DELETE FROM ci_job_dotenv_variables WHERE job_id = $1', [report.job.id]);
    for (const [position, variable] of variables.entries()) {
      await manager.query(
        'INSERT INTO ci_job_dotenv_variables (job_id, position, key, encrypted_value) VALUES ($1, $2, $3, $4)',
        [report.job.id, position, variable.key, this.secrets.seal(variable.value)],
      );
    }
  }

  private async coverage(manager: EntityManager, report: UploadedReport): Promise<void> {
    const { job } = report;
    let parsed;
    try {
      parsed = await parseCobertura(readText(report.path, report.format === 'gzip'));
    } catch (err) {
      this.log.info({ jobId: job.id, err: (err as Error).message }, 'coverage report not read');
      return;
    }
    await manager.query(
      `INSERT INTO ci_job_coverage_reports (job_id, pipeline_id, project_id, artifact_id, line_rate,
         lines_covered, lines_valid, files) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (job_id) DO UPDATE SET artifact_id = EXCLUDED.artifact_id, line_rate = EXCLUDED.line_rate,
         lines_covered = EXCLUDED.lines_covered, lines_valid = EXCLUDED.lines_valid, files = EXCLUDED.files`,
      [
        job.id,
        job.pipelineId,
        job.projectId,
        report.artifactId,
        parsed.lineRate,
        parsed.linesCovered,
        parsed.linesValid,
        JSON.stringify(parsed.files),
      ],
    );
  }

  private async security(manager: EntityManager, report: UploadedReport, type: SecurityReportType) {
    const { job } = report;
    let text: string | null = null;
    try {
      text = await readAll(report, MAX_SECURITY_REPORT_CHARS);
    } catch {
      text = '';
    }
    const checked =
      text === null
        ? {
            version: null,
            valid: false,
            errors: ['Report is too large to parse'],
            warnings: [],
            scanner: null,
            findings: [],
          }
        : checkSecurityReport(type, text);
    await manager.query('DELETE FROM ci_security_reports WHERE job_id = $1 AND report_type = $2', [
      job.id,
      type,
    ]);
    const [{ id }] = (await manager.query(
      `INSERT INTO ci_security_reports (job_id, pipeline_id, project_id, artifact_id, report_type,
         schema_version, valid, errors, warnings, scanner)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [
        job.id,
        job.pipelineId,
        job.projectId,
        report.artifactId,
        type,
        checked.version?.slice(0, 64) ?? null,
        checked.valid,
        JSON.stringify(checked.errors),
        JSON.stringify(checked.warnings),
        checked.scanner === null ? null : JSON.stringify(checked.scanner),
      ],
    )) as Array<{ id: number }>;
    for (const finding of checked.findings) {
      await manager.query(
        `INSERT INTO ci_security_findings (report_id, project_id, pipeline_id, report_type, uuid, name,
           severity, primary_identifier, location, raw) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          id,
          job.projectId,
          job.pipelineId,
          type,
          finding.uuid.slice(0, 255),
          finding.name,
          finding.severity,
          JSON.stringify(finding.primaryIdentifier),
          JSON.stringify(finding.location),
          JSON.stringify(finding.raw),
        ],
      );
    }
  }
}
