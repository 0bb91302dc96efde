import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Project and group labels, and the priorities projects give labels. */
export class Labels1767528000000 implements MigrationInterface {
  name = 'Labels1767528000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE labels (
        id serial PRIMARY KEY,
        title varchar(255) NOT NULL,
        color varchar(7) NOT NULL,
        description text,
        project_id integer REFERENCES projects (id) ON DELETE CASCADE,
        group_id integer REFERENCES namespaces (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (num_nonnulls(project_id, group_id) = 1)
      );
      CREATE UNIQUE INDEX labels_project_title ON labels (project_id, title) WHERE project_id IS NOT NULL;
      CREATE UNIQUE INDEX labels_group_title ON labels (group_id, title) WHERE group_id IS NOT NULL;
      CREATE INDEX labels_project_lower_title ON labels (project_id, lower(title)) WHERE project_id IS NOT NULL;
      CREATE INDEX labels_group_lower_title ON labels (group_id, lower(title)) WHERE group_id IS NOT NULL;

      CREATE TABLE label_priorities (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        label_id integer NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
        priority integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX label_priorities_project_label ON label_priorities (project_id, label_id);
      CREATE INDEX label_priorities_label ON label_priorities (label_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE label_priorities; DROP TABLE labels');
  }
}
