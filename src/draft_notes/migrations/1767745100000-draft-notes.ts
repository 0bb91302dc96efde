import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A reviewer's pending comments on a merge request, removed when published. They go with their merge
 * request and with their author (nobody else ever sees them). A published draft's `commit_id` stays on
 * the diff note it becomes, as GitLab's do.
 */
export class DraftNotes1767745100000 implements MigrationInterface {
  name = 'DraftNotes1767745100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE draft_notes (
        id serial PRIMARY KEY,
        merge_request_id integer NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
        author_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        note text NOT NULL,
        discussion_id varchar(64),
        resolve_discussion boolean NOT NULL DEFAULT false,
        commit_id varchar(64),
        position jsonb,
        line_code varchar(255),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- Every read is one author's drafts on one merge request, oldest first.
      CREATE INDEX draft_notes_merge_request_author ON draft_notes (merge_request_id, author_id, id);
      -- GitLab's uniqueness of an author's draft reply to a thread.
      CREATE UNIQUE INDEX draft_notes_one_reply ON draft_notes (merge_request_id, author_id, discussion_id)
        WHERE discussion_id IS NOT NULL;
      CREATE INDEX draft_notes_author ON draft_notes (author_id);
      -- A published draft's commit, on the diff note it becomes.
      ALTER TABLE notes ADD COLUMN commit_id varchar(64);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE draft_notes; ALTER TABLE notes DROP COLUMN commit_id');
  }
}
