import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The fork relation and object borrowing of projects, with `forks_count` kept by the database itself
 * (every path that inserts, deletes or relinks a project, group deletions included).
 */
export class Forks1767571200000 implements MigrationInterface {
  name = 'Forks1767571200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE projects
        ADD COLUMN forked_from_project_id integer REFERENCES projects (id) ON DELETE SET NULL,
        ADD COLUMN borrows_objects_from_id integer REFERENCES projects (id) ON DELETE SET NULL,
        ADD COLUMN import_status varchar(32) NOT NULL DEFAULT 'none';
      CREATE INDEX projects_forked_from ON projects (forked_from_project_id, id)
        WHERE forked_from_project_id IS NOT NULL;
      CREATE INDEX projects_borrows_objects_from ON projects (borrows_objects_from_id)
        WHERE borrows_objects_from_id IS NOT NULL;

      CREATE FUNCTION projects_count_forks() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.forked_from_project_id IS NOT NULL THEN
          UPDATE projects SET forks_count = forks_count - 1 WHERE id = OLD.forked_from_project_id;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.forked_from_project_id IS NOT NULL THEN
          UPDATE projects SET forks_count = forks_count + 1 WHERE id = NEW.forked_from_project_id;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER projects_count_forks_insert AFTER INSERT ON projects
        FOR EACH ROW WHEN (NEW.forked_from_project_id IS NOT NULL) EXECUTE FUNCTION projects_count_forks();
      CREATE TRIGGER projects_count_forks_delete AFTER DELETE ON projects
        FOR EACH ROW WHEN (OLD.forked_from_project_id IS NOT NULL) EXECUTE FUNCTION projects_count_forks();
      CREATE TRIGGER projects_count_forks_update AFTER UPDATE OF forked_from_project_id ON projects
        FOR EACH ROW WHEN (OLD.forked_from_project_id IS DISTINCT FROM NEW.forked_from_project_id)
        EXECUTE FUNCTION projects_count_forks();

    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER projects_count_forks_insert ON projects;
      DROP TRIGGER projects_count_forks_delete ON projects;
      DROP TRIGGER projects_count_forks_update ON projects;
      DROP FUNCTION projects_count_forks();
      ALTER TABLE projects DROP COLUMN forked_from_project_id, DROP COLUMN borrows_objects_from_id,
        DROP COLUMN import_status;
    `);
  }
}
