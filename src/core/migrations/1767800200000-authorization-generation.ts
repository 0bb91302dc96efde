import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A counter that every committed change to what decides project access moves (memberships, shares,
 * custom roles, projects' and groups' visibility, place and settings), and the readable-project sets
 * stored beside it (src/core/readable-projects.ts), used only while a statement still reads the counter
 * they were computed with. The triggers are deferred to commit, so the counter's row is locked
 * only while committing, and a writer's changes and its bump become visible together.
 */
const TRIGGERS: Array<{ table: string; changed?: string }> = [
  {
    table: 'members',
    changed: 'source_type, source_id, user_id, access_level, expires_at, member_role_id',
  },
  { table: 'project_group_links', changed: 'project_id, group_id, group_access, expires_at' },
  {
    table: 'projects',
    changed: 'namespace_id, visibility_level, archived, marked_for_deletion_at, settings',
  },
  { table: 'namespaces', changed: 'parent_id, traversal_ids, visibility_level, kind, owner_id' },
  { table: 'member_roles', changed: 'base_access_level, permissions' },
];

const row = (prefix: string, columns: string) =>
  columns
    .split(', ')
    .map((column) => `${prefix}.${column}`)
    .join(', ');

export class AuthorizationGeneration1767800200000 implements MigrationInterface {
  name = 'AuthorizationGeneration1767800200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE authorization_generation (
        id boolean PRIMARY KEY DEFAULT true CHECK (id),
        generation bigint NOT NULL
      );
      -- Started from the clock, so that a database made anew never repeats another's generations.
      INSERT INTO authorization_generation (generation)
        VALUES ((extract(epoch FROM clock_timestamp()) * 1000)::bigint);
      -- Sets of project ids per caller, each with the generation and date it holds for.
      CREATE TABLE readable_project_sets (
        key text PRIMARY KEY,
        stamp text NOT NULL,
        ids integer[] NOT NULL
      );
      CREATE FUNCTION bump_authorization_generation() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- Once per transaction is enough: the bump commits with the changes that caused it.
        IF current_setting('forge.authorization_bumped', true) = 'yes' THEN RETURN NULL; END IF;
        PERFORM set_config('forge.authorization_bumped', 'yes', true);
        UPDATE authorization_generation SET generation = generation + 1;
        -- In-memory caches of access hear it at commit (src/db/changes.ts).
        PERFORM pg_notify('forge_changes', 'access');
        RETURN NULL;
      END $$;
      CREATE FUNCTION bump_authorization_generation_now() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE authorization_generation SET generation = generation + 1;
        PERFORM pg_notify('forge_changes', 'access');
        RETURN NULL;
      END $$;
    `);
    for (const { table, changed } of TRIGGERS) {
      await q.query(`
        CREATE CONSTRAINT TRIGGER ${table}_authorization_rows AFTER INSERT OR DELETE ON ${table}
          DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_authorization_generation();
        CREATE CONSTRAINT TRIGGER ${table}_authorization_update AFTER UPDATE ON ${table}
          DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
          WHEN ((${row('OLD', changed!)}) IS DISTINCT FROM (${row('NEW', changed!)}))
          EXECUTE FUNCTION bump_authorization_generation();
        CREATE TRIGGER ${table}_authorization_truncate AFTER TRUNCATE ON ${table}
          FOR EACH STATEMENT EXECUTE FUNCTION bump_authorization_generation_now();
      `);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { table } of TRIGGERS)
      await q.query(`
        DROP TRIGGER ${table}_authorization_rows ON ${table};
        DROP TRIGGER ${table}_authorization_update ON ${table};
        DROP TRIGGER ${table}_authorization_truncate ON ${table};
      `);
    await q.query(`
      DROP FUNCTION bump_authorization_generation();
      DROP FUNCTION bump_authorization_generation_now();
      DROP TABLE authorization_generation;
      DROP TABLE readable_project_sets;
    `);
  }
}
