import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What running jobs need: the job token's digest, the live trace (chunks appended as the runner sends
 * them, archived to the object store when the job ends), the runner's last update (stuck jobs), the
 * job token scope of projects, and a NOTIFY when a build becomes pending (long-polling runners wake up).
 */
export class RunnerJobs1768300100000 implements MigrationInterface {
  name = 'RunnerJobs1768300100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE ci_builds
        ADD COLUMN token_digest varchar(64),
        ADD COLUMN trace_size bigint NOT NULL DEFAULT 0,
        ADD COLUMN trace_object varchar(255),
        ADD COLUMN runner_updated_at timestamptz;
      CREATE UNIQUE INDEX ci_builds_token_digest ON ci_builds (token_digest) WHERE token_digest IS NOT NULL;
      CREATE INDEX ci_builds_pending_queue ON ci_builds (id) WHERE status = 'pending' AND type = 'build';
      CREATE INDEX ci_builds_running_runner ON ci_builds (runner_updated_at)
        WHERE status = 'running' AND runner_id IS NOT NULL;
      CREATE TABLE ci_build_trace_chunks (
        build_id integer NOT NULL REFERENCES ci_builds (id) ON DELETE CASCADE,
        start_offset bigint NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (build_id, start_offset)
      );
      CREATE TABLE ci_job_token_scope_settings (
        project_id integer PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
        inbound_enabled boolean NOT NULL
      );
      CREATE TABLE ci_job_token_project_scope_links (
        source_project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        target_project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        added_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (source_project_id, target_project_id)
      );
      CREATE TABLE ci_job_token_group_scope_links (
        source_project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        target_group_id integer NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
        added_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (source_project_id, target_group_id)
      );
      CREATE FUNCTION ci_builds_notify_pending() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('forge_changes', 'ci_build_pending:' || NEW.id);
        RETURN NULL;
      END $$;
      CREATE TRIGGER ci_builds_pending_notify AFTER INSERT OR UPDATE OF status ON ci_builds
        FOR EACH ROW WHEN (NEW.status = 'pending' AND NEW.type = 'build')
        EXECUTE FUNCTION ci_builds_notify_pending();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER ci_builds_pending_notify ON ci_builds;
      DROP FUNCTION ci_builds_notify_pending();
      DROP TABLE ci_job_token_group_scope_links, ci_job_token_project_scope_links, ci_job_token_scope_settings,
        ci_build_trace_chunks;
      ALTER TABLE ci_builds DROP COLUMN token_digest, DROP COLUMN trace_size, DROP COLUMN trace_object,
        DROP COLUMN runner_updated_at;
    `);
  }
}
