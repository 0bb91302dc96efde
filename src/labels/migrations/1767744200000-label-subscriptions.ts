import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who is subscribed to a label, as GitLab's subscriptions: in one project (`project_id`) or at the group
 * level (no project). A row is a subscription; unsubscribing removes it.
 */
export class LabelSubscriptions1767744200000 implements MigrationInterface {
  name = 'LabelSubscriptions1767744200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE label_subscriptions (
        id serial PRIMARY KEY,
        label_id integer NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        project_id integer REFERENCES projects (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX label_subscriptions_level
        ON label_subscriptions (label_id, user_id, COALESCE(project_id, 0));
      CREATE INDEX label_subscriptions_user ON label_subscriptions (user_id, label_id);
      CREATE INDEX label_subscriptions_project ON label_subscriptions (project_id) WHERE project_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE label_subscriptions');
  }
}
