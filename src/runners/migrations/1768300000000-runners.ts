import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Runners, the projects and groups they serve, and the job a build is assigned to. */
export class Runners1768300000000 implements MigrationInterface {
  name = 'Runners1768300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ci_runners (
        id serial PRIMARY KEY,
        runner_type varchar(16) NOT NULL,
        token_digest varchar(64) NOT NULL UNIQUE,
        token_expires_at timestamptz,
        registration_type varchar(32) NOT NULL,
        creator_id integer REFERENCES users (id) ON DELETE SET NULL,
        description text,
        active boolean NOT NULL DEFAULT true,
        locked boolean NOT NULL DEFAULT false,
        run_untagged boolean NOT NULL DEFAULT true,
        tag_list jsonb NOT NULL DEFAULT '[]'::jsonb,
        access_level varchar(16) NOT NULL DEFAULT 'not_protected',
        maximum_timeout integer,
        maintenance_note text,
        contacted_at timestamptz,
        info jsonb NOT NULL DEFAULT '{}'::jsonb,
        ip_address varchar(64),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX ci_runners_type_id ON ci_runners (runner_type, id);
      CREATE TABLE ci_runner_projects (
        runner_id integer NOT NULL REFERENCES ci_runners (id) ON DELETE CASCADE,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (runner_id, project_id)
      );
      CREATE INDEX ci_runner_projects_project ON ci_runner_projects (project_id, runner_id);
      CREATE TABLE ci_runner_namespaces (
        runner_id integer NOT NULL REFERENCES ci_runners (id) ON DELETE CASCADE,
        namespace_id integer NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
        PRIMARY KEY (runner_id, namespace_id)
      );
      CREATE INDEX ci_runner_namespaces_namespace ON ci_runner_namespaces (namespace_id, runner_id);
      ALTER TABLE ci_builds ADD COLUMN runner_id integer REFERENCES ci_runners (id) ON DELETE SET NULL;
      CREATE INDEX ci_builds_runner ON ci_builds (runner_id, id) WHERE runner_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE ci_builds DROP COLUMN runner_id');
    await q.query('DROP TABLE ci_runner_namespaces, ci_runner_projects, ci_runners');
  }
}
