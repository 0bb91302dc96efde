import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Notes on merge requests, grouped into discussions by a 40-hex id as GitLab's are. */
export class Notes1767657600000 implements MigrationInterface {
  name = 'Notes1767657600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE notes (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        noteable_type varchar(32) NOT NULL CHECK (noteable_type IN ('MergeRequest')),
        noteable_id integer NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
        author_id integer REFERENCES users (id) ON DELETE SET NULL,
        body text NOT NULL,
        system boolean NOT NULL DEFAULT false,
        type varchar(32) CHECK (type IN ('DiscussionNote', 'DiffNote')),
        discussion_id char(40) NOT NULL,
        internal boolean NOT NULL DEFAULT false,
        -- Diff notes: where on the diff (GitLab's position hash) and the line's code.
        position jsonb,
        line_code varchar(100),
        resolved_at timestamptz,
        resolved_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX notes_noteable_created ON notes (noteable_id, created_at, id);
      CREATE INDEX notes_noteable_updated ON notes (noteable_id, updated_at, id);
      CREATE INDEX notes_discussion ON notes (discussion_id);
      -- A system note is its own discussion, named after the change it records: a retried job adds none.
      CREATE UNIQUE INDEX notes_system_discussion ON notes (discussion_id) WHERE system;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE notes');
  }
}
