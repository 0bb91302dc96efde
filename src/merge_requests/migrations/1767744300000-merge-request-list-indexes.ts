import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The author filter of a project's merge request list (with or without a state) in the list's order, so
 * that the page and its capped count read only the matching index entries.
 */
export class MergeRequestListIndexes1767744300000 implements MigrationInterface {
  name = 'MergeRequestListIndexes1767744300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX merge_requests_project_author_state_created
        ON merge_requests (target_project_id, author_id, state, created_at, id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX merge_requests_project_author_state_created;`);
  }
}
