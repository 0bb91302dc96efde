import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Appends the ids of the rows a statement inserted (transition table `added`) to their merge requests. */
const ADD_LINKED = `UPDATE merge_requests mr SET label_ids = mr.label_ids || a.ids
          FROM (SELECT merge_request_id, array_agg(label_id) AS ids FROM added GROUP BY merge_request_id) a
          WHERE mr.id = a.merge_request_id;`;
/** Takes the ids of the rows a statement deleted (transition table `removed`) out of their merge requests. */
const REMOVE_UNLINKED = `UPDATE merge_requests mr
          SET label_ids = ARRAY(SELECT id FROM unnest(mr.label_ids) id WHERE id <> ALL (r.ids))
          FROM (SELECT merge_request_id, array_agg(label_id) AS ids FROM removed GROUP BY merge_request_id) r
          WHERE mr.id = r.merge_request_id;`;

/**
 * Each merge request's label ids, copied from `merge_request_labels` by triggers in the same statement,
 * so that a label filter reads them from the list's index (`INCLUDE`) instead of probing the links of
 * every candidate. The triggers add and remove ids (never recompute the set), so concurrent changes to
 * one merge request's labels compose: its row lock orders them and each applies to the latest array.
 */
export class MergeRequestLabelIds1767800100000 implements MigrationInterface {
  name = 'MergeRequestLabelIds1767800100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE merge_requests ADD COLUMN label_ids integer[] NOT NULL DEFAULT '{}';
      UPDATE merge_requests mr SET label_ids = l.ids
        FROM (SELECT merge_request_id, array_agg(label_id ORDER BY label_id) AS ids
              FROM merge_request_labels GROUP BY merge_request_id) l
        WHERE l.merge_request_id = mr.id;

      CREATE FUNCTION merge_request_label_ids_add() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${ADD_LINKED}
        RETURN NULL;
      END $$;
      CREATE FUNCTION merge_request_label_ids_remove() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${REMOVE_UNLINKED}
        RETURN NULL;
      END $$;
      CREATE FUNCTION merge_request_label_ids_move() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${REMOVE_UNLINKED}
        ${ADD_LINKED}
        RETURN NULL;
      END $$;
      CREATE FUNCTION merge_request_label_ids_clear() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE merge_requests SET label_ids = '{}' WHERE label_ids <> '{}';
        RETURN NULL;
      END $$;
      CREATE TRIGGER merge_request_label_ids_insert AFTER INSERT ON merge_request_labels
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION merge_request_label_ids_add();
      CREATE TRIGGER merge_request_label_ids_delete AFTER DELETE ON merge_request_labels
        REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION merge_request_label_ids_remove();
      CREATE TRIGGER merge_request_label_ids_update AFTER UPDATE ON merge_request_labels
        REFERENCING OLD TABLE AS removed NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION merge_request_label_ids_move();
      CREATE TRIGGER merge_request_label_ids_truncate AFTER TRUNCATE ON merge_request_labels
        FOR EACH STATEMENT EXECUTE FUNCTION merge_request_label_ids_clear();

      -- The filtered lists' count reads the ids from the index entries (an index-only scan).
      DROP INDEX merge_requests_project_author_state_created;
      CREATE INDEX merge_requests_project_author_state_created
        ON merge_requests (target_project_id, author_id, state, created_at, id) INCLUDE (label_ids);
      DROP INDEX merge_requests_project_state_created;
      CREATE INDEX merge_requests_project_state_created
        ON merge_requests (target_project_id, state, created_at, id) INCLUDE (label_ids);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX merge_requests_project_state_created;
      CREATE INDEX merge_requests_project_state_created ON merge_requests (target_project_id, state, created_at, id);
      DROP INDEX merge_requests_project_author_state_created;
      CREATE INDEX merge_requests_project_author_state_created
        ON merge_requests (target_project_id, author_id, state, created_at, id);
      DROP TRIGGER merge_request_label_ids_truncate ON merge_request_labels;
      DROP TRIGGER merge_request_label_ids_update ON merge_request_labels;
      DROP TRIGGER merge_request_label_ids_delete ON merge_request_labels;
      DROP TRIGGER merge_request_label_ids_insert ON merge_request_labels;
      DROP FUNCTION merge_request_label_ids_clear();
      DROP FUNCTION merge_request_label_ids_move();
      DROP FUNCTION merge_request_label_ids_remove();
      DROP FUNCTION merge_request_label_ids_add();
      ALTER TABLE merge_requests DROP COLUMN label_ids;
    `);
  }
}
