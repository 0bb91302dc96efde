import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Announces `merge_requests:<project>` once per project whose merge requests a statement touched. */
const announceProjects = (rows: string) => `
        FOR project IN SELECT DISTINCT target_project_id FROM ${rows} WHERE target_project_id IS NOT NULL LOOP
          PERFORM pg_notify('forge_changes', 'merge_requests:' || project);
        END LOOP;`;

/**
 * Changes that cached list counts depend on, announced at commit on the channel of src/db/changes.ts:
 * `merge_requests:<target project id>` when a statement inserts, updates or deletes merge requests
 * (label links reach the rows through their `label_ids`), once per project and statement rather than
 * per row, so that bulk changes stay cheap; `labels` when a label is renamed, which changes what a label
 * filter names. A truncate announces what no cache can read, which empties them all.
 */
export class MergeRequestChanges1767800600000 implements MigrationInterface {
  name = 'MergeRequestChanges1767800600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION forge_notify_merge_request_change() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        project integer;
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('forge_changes', 'merge_requests');
          RETURN NULL;
        END IF;
        IF TG_OP <> 'INSERT' THEN ${announceProjects('old_rows')}
        END IF;
        IF TG_OP <> 'DELETE' THEN ${announceProjects('new_rows')}
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER merge_requests_changes_insert AFTER INSERT ON merge_requests
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION forge_notify_merge_request_change();
      CREATE TRIGGER merge_requests_changes_update AFTER UPDATE ON merge_requests
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION forge_notify_merge_request_change();
      CREATE TRIGGER merge_requests_changes_delete AFTER DELETE ON merge_requests
        REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION forge_notify_merge_request_change();
      CREATE TRIGGER merge_requests_changes_truncate AFTER TRUNCATE ON merge_requests
        FOR EACH STATEMENT EXECUTE FUNCTION forge_notify_merge_request_change();

      CREATE FUNCTION forge_notify_label_rename() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('forge_changes', 'labels');
        RETURN NULL;
      END $$;
      CREATE TRIGGER labels_renames AFTER UPDATE OF title ON labels
        FOR EACH STATEMENT EXECUTE FUNCTION forge_notify_label_rename();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER labels_renames ON labels;
      DROP FUNCTION forge_notify_label_rename();
      DROP TRIGGER merge_requests_changes_truncate ON merge_requests;
      DROP TRIGGER merge_requests_changes_delete ON merge_requests;
      DROP TRIGGER merge_requests_changes_update ON merge_requests;
      DROP TRIGGER merge_requests_changes_insert ON merge_requests;
      DROP FUNCTION forge_notify_merge_request_change();
    `);
  }
}
