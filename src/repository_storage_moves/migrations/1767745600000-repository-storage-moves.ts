import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Moves of repositories between storages, for any container that has repositories (projects, groups
 * for their wiki, snippets later): one table keyed by the container's kind and id, as GitLab's three
 * tables share one shape. `state` holds GitLab's numbers (1 initial … 7 cleanup_failed). At most one
 * move of a container is scheduled or started at a time: that is what keeps it read-only.
 */
export class RepositoryStorageMoves1767745600000 implements MigrationInterface {
  name = 'RepositoryStorageMoves1767745600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE repository_storage_moves (
        id serial PRIMARY KEY,
        container_type varchar(16) NOT NULL CHECK (container_type IN ('project', 'group', 'snippet')),
        container_id integer NOT NULL,
        state smallint NOT NULL DEFAULT 1,
        source_storage_name varchar(255) NOT NULL,
        destination_storage_name varchar(255) NOT NULL,
        error_message varchar(256),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- The instance-wide lists (newest first) and a container's own.
      CREATE INDEX repository_storage_moves_type_id ON repository_storage_moves (container_type, id);
      CREATE INDEX repository_storage_moves_container ON repository_storage_moves (container_type, container_id, id);
      -- One move in progress per container; also answers "is this repository read-only".
      CREATE UNIQUE INDEX repository_storage_moves_in_progress ON repository_storage_moves (container_type, container_id)
        WHERE state IN (2, 3);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE repository_storage_moves');
  }
}
