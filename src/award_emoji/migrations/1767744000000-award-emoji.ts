import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Emoji reactions on merge requests and on their notes. Every reaction names its merge request, and a
 * note's also names the note, so that deleting either removes its reactions (foreign keys, not
 * GitLab's polymorphic pair). A deleted user's reactions stay, as the ghost user's.
 */
export class AwardEmoji1767744000000 implements MigrationInterface {
  name = 'AwardEmoji1767744000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE award_emoji (
        id serial PRIMARY KEY,
        name varchar(255) NOT NULL,
        user_id integer REFERENCES users (id) ON DELETE SET NULL,
        merge_request_id integer NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
        note_id integer REFERENCES notes (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- One award of a name per user and awardable; these also serve the lists, the vote counts and the
      -- my_reaction_emoji filter.
      CREATE UNIQUE INDEX award_emoji_merge_request_user_name ON award_emoji (merge_request_id, user_id, name)
        WHERE note_id IS NULL;
      CREATE UNIQUE INDEX award_emoji_note_user_name ON award_emoji (note_id, user_id, name)
        WHERE note_id IS NOT NULL;
      CREATE INDEX award_emoji_user ON award_emoji (user_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE award_emoji');
  }
}
