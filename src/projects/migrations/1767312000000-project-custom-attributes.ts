import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ProjectCustomAttributes1767312000000 implements MigrationInterface {
  name = 'ProjectCustomAttributes1767312000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE project_custom_attributes (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        key varchar(255) NOT NULL,
        value varchar(255) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX project_custom_attributes_project_key ON project_custom_attributes (project_id, key);
      CREATE INDEX project_custom_attributes_key_value ON project_custom_attributes (key, value);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE project_custom_attributes');
  }
}
