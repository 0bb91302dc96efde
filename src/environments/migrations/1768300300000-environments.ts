import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Environments (unique name and slug per project; `auto_delete_at` once a review app is scheduled for
 * deletion) and their deployments (iid per project). A deployment
 * keeps its job as `deployable_id` (null once the job is gone, or for one created through the API); the
 * job list reads it by that column, the environment page by (environment_id, id).
 */
export class Environments1768300300000 implements MigrationInterface {
  name = 'Environments1768300300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE environments (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        slug varchar(24) NOT NULL,
        external_url varchar(255),
        description text,
        state varchar(16) NOT NULL DEFAULT 'available',
        tier varchar(16) NOT NULL DEFAULT 'other',
        auto_stop_at timestamptz,
        auto_stop_setting varchar(16) NOT NULL DEFAULT 'always',
        auto_delete_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX environments_project_name ON environments (project_id, name);
      CREATE UNIQUE INDEX environments_project_slug ON environments (project_id, slug);
      CREATE TABLE deployments (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        environment_id integer NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
        iid integer NOT NULL,
        ref varchar(255) NOT NULL,
        tag boolean NOT NULL DEFAULT false,
        sha varchar(64) NOT NULL,
        user_id integer REFERENCES users (id) ON DELETE SET NULL,
        deployable_id integer REFERENCES ci_builds (id) ON DELETE SET NULL,
        status varchar(16) NOT NULL,
        finished_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX deployments_project_iid ON deployments (project_id, iid);
      CREATE INDEX deployments_environment ON deployments (environment_id, id);
      CREATE INDEX deployments_deployable ON deployments (deployable_id) WHERE deployable_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE deployments; DROP TABLE environments');
  }
}
