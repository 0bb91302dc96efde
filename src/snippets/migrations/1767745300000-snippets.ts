import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Snippets: personal ones (no project) and project ones, each with its own repository at
 * `@snippets/<hash>` in a named storage. The user agent, IP address and spam-check flag of the
 * request that created a snippet are kept with it (GitLab's user_agent_details). A project's deletion
 * takes its snippets' rows with it; an author's, their snippets.
 */
export class Snippets1767745300000 implements MigrationInterface {
  name = 'Snippets1767745300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE snippets (
        id serial PRIMARY KEY,
        project_id integer REFERENCES projects (id) ON DELETE CASCADE,
        author_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        title varchar(255) NOT NULL,
        description text,
        visibility_level integer NOT NULL DEFAULT 0,
        repository_storage varchar(255) NOT NULL,
        repository_size bigint NOT NULL DEFAULT 0,
        -- The files at the tip of main, read from git after every change, so that lists ask git nothing.
        file_paths text[] NOT NULL DEFAULT '{}',
        user_agent text NOT NULL DEFAULT '',
        ip_address varchar(64),
        akismet_submitted boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX snippets_project ON snippets (project_id, id) WHERE project_id IS NOT NULL;
      CREATE INDEX snippets_author ON snippets (author_id, id);
      CREATE INDEX snippets_visibility ON snippets (visibility_level, id);
      -- Every snippet row that goes (deleted, or with its project or author) leaves its repository here
      -- for the removal job: the row alone knew where the repository was.
      CREATE TABLE snippet_repository_removals (
        snippet_id integer PRIMARY KEY,
        repository_storage varchar(255) NOT NULL
      );
      CREATE FUNCTION snippets_record_removal() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO snippet_repository_removals (snippet_id, repository_storage)
          VALUES (OLD.id, OLD.repository_storage) ON CONFLICT DO NOTHING;
        RETURN OLD;
      END $$;
      CREATE TRIGGER snippets_removal AFTER DELETE ON snippets
        FOR EACH ROW EXECUTE FUNCTION snippets_record_removal();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE snippets;
      DROP FUNCTION snippets_record_removal();
      DROP TABLE snippet_repository_removals;
    `);
  }
}
