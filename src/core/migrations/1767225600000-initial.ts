import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1767225600000 implements MigrationInterface {
  name = 'Initial1767225600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id serial PRIMARY KEY,
        username varchar(255) NOT NULL,
        name varchar(255) NOT NULL,
        email varchar(255) NOT NULL,
        state varchar(16) NOT NULL DEFAULT 'active',
        admin boolean NOT NULL DEFAULT false,
        external boolean NOT NULL DEFAULT false,
        bot boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX users_username_lower ON users (lower(username));
      CREATE UNIQUE INDEX users_email_lower ON users (lower(email));

      CREATE TABLE personal_access_tokens (
        id serial PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        token_digest varchar(64) NOT NULL,
        scopes text[] NOT NULL DEFAULT '{}',
        expires_at date,
        revoked boolean NOT NULL DEFAULT false,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX personal_access_tokens_digest ON personal_access_tokens (token_digest);
      CREATE INDEX personal_access_tokens_user ON personal_access_tokens (user_id);

      CREATE TABLE namespaces (
        id serial PRIMARY KEY,
        name varchar(255) NOT NULL,
        path varchar(255) NOT NULL,
        kind varchar(16) NOT NULL CHECK (kind IN ('user', 'group')),
        parent_id integer REFERENCES namespaces (id) ON DELETE RESTRICT,
        traversal_ids integer[] NOT NULL DEFAULT '{}',
        full_path varchar(2048) NOT NULL,
        full_name varchar(2048) NOT NULL,
        owner_id integer REFERENCES users (id) ON DELETE CASCADE,
        visibility_level smallint NOT NULL DEFAULT 20,
        description text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX namespaces_full_path_lower ON namespaces (lower(full_path));
      CREATE INDEX namespaces_parent ON namespaces (parent_id);
      CREATE UNIQUE INDEX namespaces_user_owner ON namespaces (owner_id) WHERE kind = 'user';

      CREATE TABLE members (
        id serial PRIMARY KEY,
        source_type varchar(16) NOT NULL CHECK (source_type IN ('Project', 'Namespace')),
        source_id integer NOT NULL,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        access_level smallint NOT NULL,
        expires_at date,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX members_source_user ON members (source_type, source_id, user_id);
      CREATE INDEX members_user ON members (user_id, source_type);

      CREATE TABLE projects (
        id serial PRIMARY KEY,
        namespace_id integer NOT NULL REFERENCES namespaces (id) ON DELETE RESTRICT,
        name varchar(255) NOT NULL,
        path varchar(255) NOT NULL,
        description text,
        default_branch varchar(255),
        visibility_level smallint NOT NULL DEFAULT 0,
        creator_id integer REFERENCES users (id) ON DELETE SET NULL,
        archived boolean NOT NULL DEFAULT false,
        topics text[] NOT NULL DEFAULT '{}',
        settings jsonb NOT NULL DEFAULT '{}',
        repository_storage varchar(255) NOT NULL DEFAULT 'default',
        import_type varchar(255),
        runners_token varchar(64) NOT NULL,
        star_count integer NOT NULL DEFAULT 0,
        forks_count integer NOT NULL DEFAULT 0,
        marked_for_deletion_at timestamptz,
        last_activity_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX projects_namespace_path_lower ON projects (namespace_id, lower(path));
      CREATE INDEX projects_visibility_id ON projects (visibility_level, id);
      CREATE INDEX projects_created_at_id ON projects (created_at, id);
      CREATE INDEX projects_last_activity_at_id ON projects (last_activity_at, id);
      CREATE INDEX projects_updated_at_id ON projects (updated_at, id);
      CREATE INDEX projects_name_id ON projects (name, id);
      CREATE INDEX projects_path_id ON projects (path, id);
      CREATE INDEX projects_creator ON projects (creator_id);

      CREATE TABLE project_statistics (
        project_id integer PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
        commit_count bigint NOT NULL DEFAULT 0,
        storage_size bigint NOT NULL DEFAULT 0,
        repository_size bigint NOT NULL DEFAULT 0,
        wiki_size bigint NOT NULL DEFAULT 0,
        lfs_objects_size bigint NOT NULL DEFAULT 0,
        job_artifacts_size bigint NOT NULL DEFAULT 0,
        pipeline_artifacts_size bigint NOT NULL DEFAULT 0,
        packages_size bigint NOT NULL DEFAULT 0,
        snippets_size bigint NOT NULL DEFAULT 0,
        uploads_size bigint NOT NULL DEFAULT 0,
        container_registry_size bigint NOT NULL DEFAULT 0
      );

      CREATE TABLE internal_ids (
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        usage varchar(64) NOT NULL,
        last_value integer NOT NULL,
        PRIMARY KEY (project_id, usage)
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE internal_ids; DROP TABLE project_statistics; DROP TABLE projects; DROP TABLE members;
      DROP TABLE namespaces; DROP TABLE personal_access_tokens; DROP TABLE users;
    `);
  }
}
