import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Rebases in progress, and automatic merges with the merge they will make (`merge_params`). */
export class MergeRequestMerging1767744400000 implements MigrationInterface {
  name = 'MergeRequestMerging1767744400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE merge_requests
        ADD COLUMN rebase_in_progress boolean NOT NULL DEFAULT false,
        ADD COLUMN merge_when_pipeline_succeeds boolean NOT NULL DEFAULT false,
        ADD COLUMN merge_params jsonb;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE merge_requests
        DROP COLUMN merge_params, DROP COLUMN merge_when_pipeline_succeeds, DROP COLUMN rebase_in_progress;
    `);
  }
}
