import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * CI/CD variables of the instance, groups and projects in one table. A key is unique per project and
 * scope, per group and scope, and once on the instance; values are encrypted by the server.
 */
export class CiVariables1767901100000 implements MigrationInterface {
  name = 'CiVariables1767901100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ci_variables (
        id serial PRIMARY KEY,
        level varchar(16) NOT NULL CHECK (level IN ('instance', 'group', 'project')),
        group_id integer REFERENCES namespaces (id) ON DELETE CASCADE,
        project_id integer REFERENCES projects (id) ON DELETE CASCADE,
        key varchar(255) NOT NULL,
        encrypted_value text NOT NULL,
        variable_type varchar(16) NOT NULL DEFAULT 'env_var',
        protected boolean NOT NULL DEFAULT false,
        masked boolean NOT NULL DEFAULT false,
        hidden boolean NOT NULL DEFAULT false,
        raw boolean NOT NULL DEFAULT false,
        environment_scope varchar(255) NOT NULL DEFAULT '*',
        description varchar(255),
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((level = 'project') = (project_id IS NOT NULL)),
        CHECK ((level = 'group') = (group_id IS NOT NULL))
      );
      CREATE UNIQUE INDEX ci_variables_project_key ON ci_variables (project_id, key, environment_scope)
        WHERE level = 'project';
      CREATE UNIQUE INDEX ci_variables_group_key ON ci_variables (group_id, key, environment_scope)
        WHERE level = 'group';
      CREATE UNIQUE INDEX ci_variables_instance_key ON ci_variables (key) WHERE level = 'instance';
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE ci_variables');
  }
}
