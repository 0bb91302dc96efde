import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pipeline schedules and their variables (values sealed with the instance key). A deleted owner's
 * schedules stay, ownerless, and run no pipeline until someone takes them over. The queue's pending run
 * of a deleted schedule finds no row and does nothing.
 */
export class PipelineSchedules1768200100000 implements MigrationInterface {
  name = 'PipelineSchedules1768200100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ci_pipeline_schedules (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        owner_id integer REFERENCES users (id) ON DELETE SET NULL,
        description text NOT NULL,
        ref varchar(255) NOT NULL,
        cron varchar(255) NOT NULL,
        cron_timezone varchar(255) NOT NULL DEFAULT 'UTC',
        next_run_at timestamptz,
        active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX ci_pipeline_schedules_project ON ci_pipeline_schedules (project_id, id);

      CREATE TABLE ci_pipeline_schedule_variables (
        id serial PRIMARY KEY,
        pipeline_schedule_id integer NOT NULL REFERENCES ci_pipeline_schedules (id) ON DELETE CASCADE,
        key varchar(255) NOT NULL,
        value_encrypted text NOT NULL,
        variable_type varchar(7) NOT NULL DEFAULT 'env_var' CHECK (variable_type IN ('env_var', 'file')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX ci_pipeline_schedule_variables_key
        ON ci_pipeline_schedule_variables (pipeline_schedule_id, key);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE ci_pipeline_schedule_variables, ci_pipeline_schedules');
  }
}
