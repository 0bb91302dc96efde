import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Push mirrors. The URL is kept without its user info; the user name and password, and the SSH private
 * key, are encrypted by the server (AES-256-GCM) before they reach the table.
 */
export class RemoteMirrors1767745400000 implements MigrationInterface {
  name = 'RemoteMirrors1767745400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE remote_mirrors (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        url varchar(2048) NOT NULL,
        encrypted_credentials text,
        auth_method varchar(16) NOT NULL DEFAULT 'password',
        encrypted_ssh_private_key text,
        ssh_public_key text,
        ssh_known_hosts text,
        enabled boolean NOT NULL DEFAULT false,
        only_protected_branches boolean NOT NULL DEFAULT false,
        keep_divergent_refs boolean NOT NULL DEFAULT false,
        mirror_branch_regex varchar(255),
        update_status varchar(16) NOT NULL DEFAULT 'none',
        last_error text,
        last_update_at timestamptz,
        last_update_started_at timestamptz,
        last_successful_update_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX remote_mirrors_project ON remote_mirrors (project_id, id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE remote_mirrors');
  }
}
