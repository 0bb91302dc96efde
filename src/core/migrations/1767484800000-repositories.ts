import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Protected branches and tags with their access levels, the durable record of every push, repository state. */
export class Repositories1767484800000 implements MigrationInterface {
  name = 'Repositories1767484800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE protected_branches (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        allow_force_push boolean NOT NULL DEFAULT false,
        code_owner_approval_required boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX protected_branches_project_name ON protected_branches (project_id, name);

      CREATE TABLE protected_branch_access_levels (
        id serial PRIMARY KEY,
        protected_branch_id integer NOT NULL REFERENCES protected_branches (id) ON DELETE CASCADE,
        action varchar(16) NOT NULL CHECK (action IN ('push', 'merge', 'unprotect')),
        access_level smallint,
        user_id integer REFERENCES users (id) ON DELETE CASCADE,
        group_id integer REFERENCES namespaces (id) ON DELETE CASCADE,
        deploy_key_id integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK (num_nonnulls(access_level, user_id, group_id, deploy_key_id) = 1)
      );
      CREATE INDEX protected_branch_access_levels_branch ON protected_branch_access_levels (protected_branch_id, action);

      CREATE TABLE protected_tags (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX protected_tags_project_name ON protected_tags (project_id, name);

      CREATE TABLE protected_tag_create_access_levels (
        id serial PRIMARY KEY,
        protected_tag_id integer NOT NULL REFERENCES protected_tags (id) ON DELETE CASCADE,
        access_level smallint,
        user_id integer REFERENCES users (id) ON DELETE CASCADE,
        group_id integer REFERENCES namespaces (id) ON DELETE CASCADE,
        deploy_key_id integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK (num_nonnulls(access_level, user_id, group_id, deploy_key_id) = 1)
      );
      CREATE INDEX protected_tag_create_access_levels_tag ON protected_tag_create_access_levels (protected_tag_id);

      CREATE TABLE push_events (
        id bigserial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        user_id integer REFERENCES users (id) ON DELETE SET NULL,
        ref varchar(1024) NOT NULL,
        before_sha varchar(64) NOT NULL,
        after_sha varchar(64) NOT NULL,
        via varchar(16) NOT NULL CHECK (via IN ('git', 'api')),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX push_events_project_id ON push_events (project_id, id);

      -- What lists show about each repository, refreshed after every push instead of read per project.
      ALTER TABLE projects
        ADD COLUMN repository_empty boolean NOT NULL DEFAULT true,
        ADD COLUMN readme_path varchar(1024);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE projects DROP COLUMN repository_empty, DROP COLUMN readme_path;
      DROP TABLE push_events; DROP TABLE protected_tag_create_access_levels; DROP TABLE protected_tags;
      DROP TABLE protected_branch_access_levels; DROP TABLE protected_branches;
    `);
  }
}
