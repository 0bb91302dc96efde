import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What jobs' report artifacts feed, read when they are uploaded (the artifacts family keeps the files):
 * each job's JUnit suite summary (GitLab's ci_build_report_results) and its test cases, its dotenv
 * variables (values sealed), its Cobertura line coverage, and its security reports with their findings.
 * Everything goes with its job.
 */
export class CiReports1768300250000 implements MigrationInterface {
  name = 'CiReports1768300250000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ci_test_suite_results (
        id serial PRIMARY KEY,
        job_id integer NOT NULL UNIQUE REFERENCES ci_builds (id) ON DELETE CASCADE,
        pipeline_id integer NOT NULL,
        project_id integer NOT NULL,
        artifact_id integer,
        suite_name varchar(255) NOT NULL,
        success_count integer NOT NULL DEFAULT 0,
        failed_count integer NOT NULL DEFAULT 0,
        skipped_count integer NOT NULL DEFAULT 0,
        error_count integer NOT NULL DEFAULT 0,
        total_time double precision NOT NULL DEFAULT 0,
        suite_error text,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX index_ci_test_suite_results_on_pipeline ON ci_test_suite_results (pipeline_id);
      CREATE TABLE ci_test_cases (
        id bigserial PRIMARY KEY,
        job_id integer NOT NULL REFERENCES ci_builds (id) ON DELETE CASCADE,
        pipeline_id integer NOT NULL,
        status varchar(8) NOT NULL,
        case_key char(64) NOT NULL,
        position integer NOT NULL,
        name text,
        classname text,
        file text,
        execution_time double precision NOT NULL DEFAULT 0,
        system_output text,
        attachment text,
        UNIQUE (job_id, status, case_key)
      );
      CREATE INDEX index_ci_test_cases_on_pipeline ON ci_test_cases (pipeline_id);
      CREATE TABLE ci_job_dotenv_variables (
        id serial PRIMARY KEY,
        job_id integer NOT NULL REFERENCES ci_builds (id) ON DELETE CASCADE,
        position integer NOT NULL,
        key varchar(255) NOT NULL,
        encrypted_value text NOT NULL,
        UNIQUE (job_id, key)
      );
      CREATE TABLE ci_job_coverage_reports (
        job_id integer PRIMARY KEY REFERENCES ci_builds (id) ON DELETE CASCADE,
        pipeline_id integer NOT NULL,
        project_id integer NOT NULL,
        artifact_id integer,
        line_rate numeric(5, 2),
        lines_covered integer NOT NULL DEFAULT 0,
        lines_valid integer NOT NULL DEFAULT 0,
        files jsonb NOT NULL DEFAULT '{}'
      );
      CREATE INDEX index_ci_job_coverage_reports_on_pipeline ON ci_job_coverage_reports (pipeline_id);
      CREATE TABLE ci_security_reports (
        id serial PRIMARY KEY,
        job_id integer NOT NULL REFERENCES ci_builds (id) ON DELETE CASCADE,
        pipeline_id integer NOT NULL,
        project_id integer NOT NULL,
        artifact_id integer,
        report_type varchar(32) NOT NULL,
        schema_version varchar(64),
        valid boolean NOT NULL,
        errors jsonb NOT NULL DEFAULT '[]',
        warnings jsonb NOT NULL DEFAULT '[]',
        scanner jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (job_id, report_type)
      );
      CREATE INDEX index_ci_security_reports_on_pipeline ON ci_security_reports (pipeline_id);
      CREATE TABLE ci_security_findings (
        id bigserial PRIMARY KEY,
        report_id integer NOT NULL REFERENCES ci_security_reports (id) ON DELETE CASCADE,
        project_id integer NOT NULL,
        pipeline_id integer NOT NULL,
        report_type varchar(32) NOT NULL,
        uuid varchar(255) NOT NULL,
        name text,
        severity varchar(16),
        primary_identifier jsonb,
        location jsonb,
        raw jsonb NOT NULL
      );
      CREATE INDEX index_ci_security_findings_on_report ON ci_security_findings (report_id);
      CREATE INDEX index_ci_security_findings_on_project ON ci_security_findings (project_id, pipeline_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ci_security_findings, ci_security_reports, ci_job_coverage_reports,
      ci_job_dotenv_variables, ci_test_cases, ci_test_suite_results`);
  }
}
