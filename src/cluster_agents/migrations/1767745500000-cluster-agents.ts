import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Cluster agents registered for a project, and their tokens (stored as SHA-256 digests). Deleting an agent
 * revokes its tokens and removes the registration; the token rows go with it, so a revoked or removed
 * token authenticates nothing. A deleted user's agents and tokens stay, with no creator.
 */
export class ClusterAgents1767745500000 implements MigrationInterface {
  name = 'ClusterAgents1767745500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE cluster_agents (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        name varchar(63) NOT NULL,
        created_by_user_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX cluster_agents_project_name ON cluster_agents (project_id, name);

      CREATE TABLE cluster_agent_tokens (
        id serial PRIMARY KEY,
        agent_id integer NOT NULL REFERENCES cluster_agents (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        description text,
        token_digest varchar(64) NOT NULL,
        status varchar(7) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
        created_by_user_id integer REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz
      );
      CREATE UNIQUE INDEX cluster_agent_tokens_digest ON cluster_agent_tokens (token_digest);
      CREATE INDEX cluster_agent_tokens_agent ON cluster_agent_tokens (agent_id, status, id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE cluster_agent_tokens; DROP TABLE cluster_agents');
  }
}
