import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Project and group milestones, each numbered (iid) within its project or group. */
export class Milestones1767528060000 implements MigrationInterface {
  name = 'Milestones1767528060000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE milestones (
        id serial PRIMARY KEY,
        iid integer NOT NULL,
        project_id integer REFERENCES projects (id) ON DELETE CASCADE,
        group_id integer REFERENCES namespaces (id) ON DELETE CASCADE,
        title varchar(255) NOT NULL,
        description text,
        state varchar(16) NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'closed')),
        due_date date,
        start_date date,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (num_nonnulls(project_id, group_id) = 1)
      );
      CREATE UNIQUE INDEX milestones_project_iid ON milestones (project_id, iid) WHERE project_id IS NOT NULL;
      CREATE UNIQUE INDEX milestones_group_iid ON milestones (group_id, iid) WHERE group_id IS NOT NULL;
      CREATE INDEX milestones_project_title ON milestones (project_id, title) WHERE project_id IS NOT NULL;
      CREATE INDEX milestones_group_title ON milestones (group_id, title) WHERE group_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE milestones');
  }
}
