import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Labels and a milestone on merge requests: a deleted label drops its links, a deleted milestone is unset. */
export class MergeRequestLabels1767571400000 implements MigrationInterface {
  name = 'MergeRequestLabels1767571400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE merge_request_labels (
        merge_request_id integer NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
        label_id integer NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
        PRIMARY KEY (merge_request_id, label_id)
      );
      CREATE INDEX merge_request_labels_label ON merge_request_labels (label_id, merge_request_id);

      ALTER TABLE merge_requests ADD COLUMN milestone_id integer REFERENCES milestones (id) ON DELETE SET NULL;
      CREATE INDEX merge_requests_milestone ON merge_requests (milestone_id) WHERE milestone_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX merge_requests_milestone;
      ALTER TABLE merge_requests DROP COLUMN milestone_id;
      DROP TABLE merge_request_labels;
    `);
  }
}
