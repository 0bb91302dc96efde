import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Users' profiles and passwords, token rotation, group settings, member authorship, project shares. */
export class Identity1767398400000 implements MigrationInterface {
  name = 'Identity1767398400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE users
        ADD COLUMN user_type varchar(32) NOT NULL DEFAULT 'human',
        ADD COLUMN profile jsonb NOT NULL DEFAULT '{}',
        ADD COLUMN note text,
        ADD COLUMN projects_limit integer NOT NULL DEFAULT 100000,
        ADD COLUMN can_create_group boolean NOT NULL DEFAULT true,
        ADD COLUMN private_profile boolean NOT NULL DEFAULT false,
        ADD COLUMN password_digest varchar(255),
        ADD COLUMN created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        ADD COLUMN confirmed_at timestamptz DEFAULT now(),
        ADD COLUMN last_activity_on date;
      CREATE INDEX users_state_id ON users (state, id);
      CREATE INDEX users_name_lower ON users (lower(name));

      ALTER TABLE personal_access_tokens
        ADD COLUMN description text,
        ADD COLUMN previous_token_id integer REFERENCES personal_access_tokens (id) ON DELETE SET NULL;
      CREATE INDEX personal_access_tokens_previous ON personal_access_tokens (previous_token_id);

      ALTER TABLE namespaces
        ADD COLUMN settings jsonb NOT NULL DEFAULT '{}',
        ADD COLUMN marked_for_deletion_at timestamptz;
      CREATE INDEX namespaces_traversal_ids ON namespaces USING gin (traversal_ids);

      ALTER TABLE members ADD COLUMN created_by_id integer REFERENCES users (id) ON DELETE SET NULL;
      CREATE INDEX members_source ON members (source_type, source_id, access_level);

      CREATE TABLE project_group_links (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        group_id integer NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
        group_access smallint NOT NULL,
        expires_at date,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX project_group_links_project_group ON project_group_links (project_id, group_id);
      CREATE INDEX project_group_links_group ON project_group_links (group_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE project_group_links;
      ALTER TABLE members DROP COLUMN created_by_id;
      DROP INDEX members_source;
      ALTER TABLE namespaces DROP COLUMN settings, DROP COLUMN marked_for_deletion_at;
      DROP INDEX namespaces_traversal_ids;
      ALTER TABLE personal_access_tokens DROP COLUMN description, DROP COLUMN previous_token_id;
      DROP INDEX users_state_id; DROP INDEX users_name_lower;
      ALTER TABLE users DROP COLUMN user_type, DROP COLUMN profile, DROP COLUMN note,
        DROP COLUMN projects_limit, DROP COLUMN can_create_group, DROP COLUMN private_profile,
        DROP COLUMN password_digest, DROP COLUMN created_by_id, DROP COLUMN confirmed_at,
        DROP COLUMN last_activity_on;
    `);
  }
}
