import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A merge request's rebase is queued or running (`rebase_in_progress`). */
export class MergeRequestMerging1767744400000 implements MigrationInterface {
  name = 'MergeRequestMerging1767744400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE merge_requests ADD COLUMN rebase_in_progress boolean NOT NULL DEFAULT false;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE merge_requests DROP COLUMN rebase_in_progress;
    `);
  }
}
