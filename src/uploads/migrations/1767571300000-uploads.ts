import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Files uploaded to a project (for Markdown in descriptions and notes); the bytes live on disk. */
export class Uploads1767571300000 implements MigrationInterface {
  name = 'Uploads1767571300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE uploads (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        secret varchar(32) NOT NULL,
        filename varchar(255) NOT NULL,
        size bigint NOT NULL,
        uploaded_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX uploads_project_secret_filename ON uploads (project_id, secret, filename);
      CREATE INDEX uploads_project_id ON uploads (project_id, id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE uploads');
  }
}
