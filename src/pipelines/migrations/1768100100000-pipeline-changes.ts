import type { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = ['ci_pipelines', 'ci_builds'];

/**
 * Announces `pipelines:<project>` (src/db/changes.ts) once per project and statement that inserts,
 * updates or deletes pipelines or jobs, so that the lists' cached counts stay exact; per statement
 * rather than per row, so that a pipeline's 500 jobs inserted at once cost one announcement.
 */
export class PipelineChanges1768100100000 implements MigrationInterface {
  name = 'PipelineChanges1768100100000';

  async up(q: QueryRunner): Promise<void> {
    const announce = (rows: string) => `
        FOR project IN SELECT DISTINCT project_id FROM ${rows} LOOP
          PERFORM pg_notify('forge_changes', 'pipelines:' || project);
        END LOOP;`;
    await q.query(`
      CREATE FUNCTION forge_notify_pipeline_change() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        project integer;
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('forge_changes', 'pipelines');
          RETURN NULL;
        END IF;
        IF TG_OP <> 'INSERT' THEN ${announce('old_rows')}
        END IF;
        IF TG_OP <> 'DELETE' THEN ${announce('new_rows')}
        END IF;
        RETURN NULL;
      END $$;`);
    for (const table of TABLES)
      await q.query(`
        CREATE TRIGGER ${table}_changes_insert AFTER INSERT ON ${table}
          REFERENCING NEW TABLE AS new_rows
          FOR EACH STATEMENT EXECUTE FUNCTION forge_notify_pipeline_change();
        CREATE TRIGGER ${table}_changes_update AFTER UPDATE ON ${table}
          REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
          FOR EACH STATEMENT EXECUTE FUNCTION forge_notify_pipeline_change();
        CREATE TRIGGER ${table}_changes_delete AFTER DELETE ON ${table}
          REFERENCING OLD TABLE AS old_rows
          FOR EACH STATEMENT EXECUTE FUNCTION forge_notify_pipeline_change();
        CREATE TRIGGER ${table}_changes_truncate AFTER TRUNCATE ON ${table}
          FOR EACH STATEMENT EXECUTE FUNCTION forge_notify_pipeline_change();`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES)
      for (const event of ['insert', 'update', 'delete', 'truncate'])
        await q.query(`DROP TRIGGER ${table}_changes_${event} ON ${table}`);
    await q.query('DROP FUNCTION forge_notify_pipeline_change()');
  }
}
