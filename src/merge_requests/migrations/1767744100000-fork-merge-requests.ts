import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Merge requests from forks outlive their fork: deleting it leaves `source_project_id` null in the
 * target's merge requests (GitLab keeps them, commits and all, in the target). A project that leaves its
 * fork network, by deletion or by losing its fork relation, closes the open merge requests between it and
 * other projects, as GitLab's UnlinkForkService does (`from_and_to_forks`). A trigger, so that no
 * deletion path (a project's, a group's) can miss it; it writes no system note.
 */
export class ForkMergeRequests1767744100000 implements MigrationInterface {
  name = 'ForkMergeRequests1767744100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE merge_requests ALTER COLUMN source_project_id DROP NOT NULL;
      ALTER TABLE merge_requests DROP CONSTRAINT merge_requests_source_project_id_fkey;
      ALTER TABLE merge_requests ADD CONSTRAINT merge_requests_source_project_id_fkey
        FOREIGN KEY (source_project_id) REFERENCES projects (id) ON DELETE SET NULL;

      CREATE FUNCTION merge_requests_close_across_forks() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE merge_requests SET state = 'closed', closed_at = now(), updated_at = now()
        WHERE state = 'opened' AND source_project_id <> target_project_id
          AND (source_project_id = OLD.id OR target_project_id = OLD.id);
        RETURN OLD;
      END $$;
      CREATE TRIGGER merge_requests_close_on_project_delete BEFORE DELETE ON projects
        FOR EACH ROW EXECUTE FUNCTION merge_requests_close_across_forks();
      CREATE TRIGGER merge_requests_close_on_fork_unlink AFTER UPDATE OF forked_from_project_id ON projects
        FOR EACH ROW WHEN (OLD.forked_from_project_id IS NOT NULL
          AND NEW.forked_from_project_id IS DISTINCT FROM OLD.forked_from_project_id)
        EXECUTE FUNCTION merge_requests_close_across_forks();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER merge_requests_close_on_fork_unlink ON projects;
      DROP TRIGGER merge_requests_close_on_project_delete ON projects;
      DROP FUNCTION merge_requests_close_across_forks();
      DELETE FROM merge_requests WHERE source_project_id IS NULL;
      ALTER TABLE merge_requests DROP CONSTRAINT merge_requests_source_project_id_fkey;
      ALTER TABLE merge_requests ADD CONSTRAINT merge_requests_source_project_id_fkey
        FOREIGN KEY (source_project_id) REFERENCES projects (id) ON DELETE CASCADE;
      ALTER TABLE merge_requests ALTER COLUMN source_project_id SET NOT NULL;
    `);
  }
}
