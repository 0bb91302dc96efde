import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A project's push rule (at most one): the checks every push and every API commit must pass. */
export class PushRules1767745201000 implements MigrationInterface {
  name = 'PushRules1767745201000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE push_rules (
        id serial PRIMARY KEY,
        project_id integer NOT NULL UNIQUE REFERENCES projects (id) ON DELETE CASCADE,
        commit_message_regex text,
        commit_message_negative_regex text,
        branch_name_regex text,
        author_email_regex text,
        file_name_regex text,
        deny_delete_tag boolean NOT NULL DEFAULT false,
        member_check boolean NOT NULL DEFAULT false,
        commit_committer_check boolean NOT NULL DEFAULT false,
        commit_committer_name_check boolean NOT NULL DEFAULT false,
        reject_non_dco_commits boolean NOT NULL DEFAULT false,
        max_file_size integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now()
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE push_rules');
  }
}
