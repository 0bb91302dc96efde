import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pipeline trigger tokens: the token sealed (AES-256-GCM with the instance key) for its owner to read
 * back, and its SHA-256 digest, unique, to find it by. A deleted owner's tokens stay, with no owner, and
 * start nothing (a pipeline needs a user).
 */
export class PipelineTriggers1768200000000 implements MigrationInterface {
  name = 'PipelineTriggers1768200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ci_triggers (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        owner_id integer REFERENCES users (id) ON DELETE SET NULL,
        description text NOT NULL,
        token_encrypted text NOT NULL,
        token_digest varchar(64) NOT NULL,
        last_used timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX ci_triggers_token_digest ON ci_triggers (token_digest);
      CREATE INDEX ci_triggers_project ON ci_triggers (project_id, id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE ci_triggers');
  }
}
