import type { MigrationInterface, QueryRunner } from 'typeorm';
import { announceReferenceChanges } from '../../db/change-triggers.js';

/** A project entering or leaving a namespace (a user's personal project count). */
const PROJECT_PLACES = announceReferenceChanges(
  'project_namespace',
  'projects',
  'INSERT OR DELETE OR UPDATE OF namespace_id',
  'namespace',
  'namespace_id',
);

/**
 * Changes that cached principals depend on, announced with `pg_notify('forge_changes', ...)` when they
 * commit (src/db/changes.ts): `user:<id>` when a user row changes or goes, or any token of theirs does
 * (besides its `last_used_at`, which use itself writes); `namespace:<id>` when a project enters or leaves
 * the namespace (a user's personal project count). PostgreSQL folds equal payloads of one transaction.
 */
export class AccountChanges1767800400000 implements MigrationInterface {
  name = 'AccountChanges1767800400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION forge_notify_user_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('forge_changes', 'user:' || OLD.id);
        RETURN NULL;
      END $$;
      CREATE TRIGGER users_changes AFTER UPDATE OR DELETE ON users
        FOR EACH ROW EXECUTE FUNCTION forge_notify_user_change();

      CREATE FUNCTION forge_notify_token_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('forge_changes', 'user:' || OLD.user_id);
        IF TG_OP = 'UPDATE' AND NEW.user_id <> OLD.user_id THEN
          PERFORM pg_notify('forge_changes', 'user:' || NEW.user_id);
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER personal_access_tokens_changes AFTER UPDATE ON personal_access_tokens
        FOR EACH ROW WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
        EXECUTE FUNCTION forge_notify_token_change();
      CREATE TRIGGER personal_access_tokens_deletes AFTER DELETE ON personal_access_tokens
        FOR EACH ROW EXECUTE FUNCTION forge_notify_token_change();

      ${PROJECT_PLACES.up}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ${PROJECT_PLACES.down}
      DROP TRIGGER personal_access_tokens_deletes ON personal_access_tokens;
      DROP TRIGGER personal_access_tokens_changes ON personal_access_tokens;
      DROP TRIGGER users_changes ON users;
      DROP FUNCTION forge_notify_token_change();
      DROP FUNCTION forge_notify_user_change();
    `);
  }
}
