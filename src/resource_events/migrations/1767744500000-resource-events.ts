import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The history of a merge request's labels, milestone and state (GitLab's resource events), written in the
 * transaction of the change. Deleting the merge request deletes its events; a deleted label or milestone
 * leaves its events with none (shown as null); a deleted user's events stay, as the ghost user's.
 */
export class ResourceEvents1767744500000 implements MigrationInterface {
  name = 'ResourceEvents1767744500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE resource_label_events (
        id serial PRIMARY KEY,
        merge_request_id integer NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
        label_id integer REFERENCES labels (id) ON DELETE SET NULL,
        user_id integer REFERENCES users (id) ON DELETE SET NULL,
        action varchar(6) NOT NULL CHECK (action IN ('add', 'remove')),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX resource_label_events_merge_request ON resource_label_events (merge_request_id, id);
      CREATE INDEX resource_label_events_label ON resource_label_events (label_id);
      CREATE INDEX resource_label_events_user ON resource_label_events (user_id);

      CREATE TABLE resource_milestone_events (
        id serial PRIMARY KEY,
        merge_request_id integer NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
        milestone_id integer REFERENCES milestones (id) ON DELETE SET NULL,
        user_id integer REFERENCES users (id) ON DELETE SET NULL,
        action varchar(6) NOT NULL CHECK (action IN ('add', 'remove')),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX resource_milestone_events_merge_request ON resource_milestone_events (merge_request_id, id);
      CREATE INDEX resource_milestone_events_milestone ON resource_milestone_events (milestone_id);
      CREATE INDEX resource_milestone_events_user ON resource_milestone_events (user_id);

      CREATE TABLE resource_state_events (
        id serial PRIMARY KEY,
        merge_request_id integer NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
        user_id integer REFERENCES users (id) ON DELETE SET NULL,
        state varchar(8) NOT NULL CHECK (state IN ('closed', 'reopened', 'merged')),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX resource_state_events_merge_request ON resource_state_events (merge_request_id, id);
      CREATE INDEX resource_state_events_user ON resource_state_events (user_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE resource_state_events, resource_milestone_events, resource_label_events');
  }
}
