import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pipelines, their stages, their jobs (builds, bridges and commit statuses in one table, as GitLab keeps
 * them), pipeline variables and resource groups. Runner tokens come with the runners' own migration.
 */
export class Pipelines1768100000000 implements MigrationInterface {
  name = 'Pipelines1768100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ci_pipelines (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        iid integer NOT NULL,
        ref varchar(255) NOT NULL,
        sha varchar(64) NOT NULL,
        before_sha varchar(64) NOT NULL DEFAULT '0000000000000000000000000000000000000000',
        tag boolean NOT NULL DEFAULT false,
        source varchar(32) NOT NULL,
        status varchar(32) NOT NULL DEFAULT 'created',
        failure_reason varchar(64),
        name text,
        yaml_errors text,
        user_id integer REFERENCES users (id) ON DELETE SET NULL,
        merge_request_id integer,
        parent_pipeline_id integer REFERENCES ci_pipelines (id) ON DELETE SET NULL,
        upstream_pipeline_id integer REFERENCES ci_pipelines (id) ON DELETE SET NULL,
        upstream_job_id integer,
        trigger_id integer,
        schedule_id integer,
        auto_canceled_by_id integer REFERENCES ci_pipelines (id) ON DELETE SET NULL,
        auto_cancel_on_new_commit varchar(16),
        auto_cancel_on_job_failure varchar(16),
        started_at timestamptz,
        finished_at timestamptz,
        committed_at timestamptz,
        duration integer,
        queued_duration integer,
        coverage numeric(5, 2),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (project_id, iid)
      );
      CREATE INDEX ci_pipelines_project_id ON ci_pipelines (project_id, id);
      CREATE INDEX ci_pipelines_project_ref ON ci_pipelines (project_id, ref, id);
      CREATE INDEX ci_pipelines_project_status ON ci_pipelines (project_id, status, id);
      CREATE INDEX ci_pipelines_project_sha ON ci_pipelines (project_id, sha, id);
      CREATE INDEX ci_pipelines_project_source ON ci_pipelines (project_id, source, id);
      CREATE INDEX ci_pipelines_project_user ON ci_pipelines (project_id, user_id, id);
      CREATE INDEX ci_pipelines_project_updated ON ci_pipelines (project_id, updated_at, id);
      CREATE INDEX ci_pipelines_project_created ON ci_pipelines (project_id, created_at, id);
      CREATE INDEX ci_pipelines_upstream_job ON ci_pipelines (upstream_job_id);

      CREATE TABLE ci_resource_groups (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        key varchar(255) NOT NULL,
        process_mode varchar(32) NOT NULL DEFAULT 'unordered',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (project_id, key)
      );

      CREATE TABLE ci_stages (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        pipeline_id integer NOT NULL REFERENCES ci_pipelines (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        position integer NOT NULL,
        status varchar(32) NOT NULL DEFAULT 'created',
        UNIQUE (pipeline_id, name)
      );

      CREATE TABLE ci_builds (
        id serial PRIMARY KEY,
        type varchar(16) NOT NULL,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        pipeline_id integer NOT NULL REFERENCES ci_pipelines (id) ON DELETE CASCADE,
        stage_id integer REFERENCES ci_stages (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        stage varchar(255) NOT NULL,
        stage_idx integer NOT NULL,
        status varchar(32) NOT NULL DEFAULT 'created',
        failure_reason varchar(64),
        "when" varchar(16) NOT NULL DEFAULT 'on_success',
        start_in varchar(64),
        allow_failure boolean NOT NULL DEFAULT false,
        options jsonb NOT NULL DEFAULT '{}',
        yaml_variables jsonb NOT NULL DEFAULT '{}',
        needs jsonb,
        job_variables text,
        resource_group_id integer REFERENCES ci_resource_groups (id) ON DELETE SET NULL,
        interruptible boolean NOT NULL DEFAULT false,
        retried boolean NOT NULL DEFAULT false,
        user_id integer REFERENCES users (id) ON DELETE SET NULL,
        ref varchar(255) NOT NULL,
        tag boolean NOT NULL DEFAULT false,
        sha varchar(64) NOT NULL,
        exit_code integer,
        trace text,
        erased_at timestamptz,
        erased_by_id integer,
        scheduled_at timestamptz,
        queued_at timestamptz,
        started_at timestamptz,
        finished_at timestamptz,
        duration double precision,
        coverage numeric(5, 2),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX ci_builds_pipeline ON ci_builds (pipeline_id, retried, stage_idx, id);
      CREATE INDEX ci_builds_project_status ON ci_builds (project_id, status, id);
      CREATE INDEX ci_builds_project_id ON ci_builds (project_id, id);
      CREATE INDEX ci_builds_resource_group ON ci_builds (resource_group_id, status);

      CREATE TABLE ci_pipeline_variables (
        id serial PRIMARY KEY,
        pipeline_id integer NOT NULL REFERENCES ci_pipelines (id) ON DELETE CASCADE,
        key varchar(255) NOT NULL,
        encrypted_value text NOT NULL,
        variable_type varchar(16) NOT NULL DEFAULT 'env_var',
        raw boolean NOT NULL DEFAULT false
      );
      CREATE INDEX ci_pipeline_variables_pipeline ON ci_pipeline_variables (pipeline_id, id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE ci_pipeline_variables, ci_builds, ci_stages, ci_resource_groups, ci_pipelines');
  }
}
