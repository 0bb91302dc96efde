import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Feature flags (GitLab's new-version flags) with their strategies and each strategy's environment
 * scopes, the project's user lists, and the project's Unleash client (its instance id). A strategy of
 * type `gitlabUserList` names one list; the foreign key refuses deleting a list in use (the service answers
 * first with GitLab's 409). It is checked at commit (deferred), so that deleting the project takes its
 * flags and lists together, whatever order the cascades run in.
 */
export class FeatureFlags1767745501000 implements MigrationInterface {
  name = 'FeatureFlags1767745501000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE feature_flag_user_lists (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        iid integer NOT NULL,
        name varchar(255) NOT NULL,
        user_xids text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX feature_flag_user_lists_project_iid ON feature_flag_user_lists (project_id, iid);
      CREATE UNIQUE INDEX feature_flag_user_lists_project_name ON feature_flag_user_lists (project_id, name);

      CREATE TABLE feature_flags (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        iid integer NOT NULL,
        name varchar(63) NOT NULL,
        description varchar(255),
        active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX feature_flags_project_name ON feature_flags (project_id, name);
      CREATE UNIQUE INDEX feature_flags_project_iid ON feature_flags (project_id, iid);

      CREATE TABLE feature_flag_strategies (
        id serial PRIMARY KEY,
        feature_flag_id integer NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        parameters jsonb NOT NULL DEFAULT '{}',
        user_list_id integer REFERENCES feature_flag_user_lists (id) DEFERRABLE INITIALLY DEFERRED
      );
      CREATE INDEX feature_flag_strategies_flag ON feature_flag_strategies (feature_flag_id, id);
      CREATE INDEX feature_flag_strategies_user_list ON feature_flag_strategies (user_list_id);

      CREATE TABLE feature_flag_scopes (
        id serial PRIMARY KEY,
        strategy_id integer NOT NULL REFERENCES feature_flag_strategies (id) ON DELETE CASCADE,
        environment_scope varchar(255) NOT NULL
      );
      CREATE UNIQUE INDEX feature_flag_scopes_strategy_scope ON feature_flag_scopes (strategy_id, environment_scope);

      CREATE TABLE feature_flags_clients (
        project_id integer PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
        token varchar(64) NOT NULL
      );
      CREATE UNIQUE INDEX feature_flags_clients_token ON feature_flags_clients (token);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE feature_flags_clients; DROP TABLE feature_flag_scopes;
      DROP TABLE feature_flag_strategies; DROP TABLE feature_flags; DROP TABLE feature_flag_user_lists`);
  }
}
