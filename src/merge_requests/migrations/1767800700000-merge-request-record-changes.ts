import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A table whose rows change what a project's merge request lists show beside the merge requests' own
 * rows, and the SQL (over a transition table, `$rows`) selecting the target projects a statement
 * touched. Rows of a merge request being deleted are covered by the merge request's own announcement.
 */
interface Source {
  table: string;
  events: Array<'INSERT' | 'UPDATE' | 'DELETE'>;
  projects: string;
}

const viaMergeRequest = (column: string) =>
  `SELECT DISTINCT mr.target_project_id FROM $rows r JOIN merge_requests mr ON mr.id = r.${column}`;
const direct = `SELECT DISTINCT project_id FROM $rows WHERE project_id IS NOT NULL`;
const ALL: Source['events'] = ['INSERT', 'UPDATE', 'DELETE'];

const SOURCES: Source[] = [
  { table: 'merge_request_assignees', events: ALL, projects: viaMergeRequest('merge_request_id') },
  { table: 'merge_request_reviewers', events: ALL, projects: viaMergeRequest('merge_request_id') },
  { table: 'merge_request_approvals', events: ALL, projects: viaMergeRequest('merge_request_id') },
  { table: 'award_emoji', events: ALL, projects: viaMergeRequest('merge_request_id') },
  { table: 'notes', events: ALL, projects: viaMergeRequest('noteable_id') },
  { table: 'approval_rules', events: ALL, projects: direct },
  { table: 'project_approval_settings', events: ALL, projects: direct },
  // Whether a fork's merge request allows collaboration reads its source project's protected branches.
  { table: 'protected_branches', events: ALL, projects: direct },
  // A deleted label or milestone leaves its merge requests through their own rows (label_ids, milestone_id).
  {
    table: 'labels',
    events: ['UPDATE'],
    projects: `${direct} UNION SELECT mr.target_project_id FROM merge_request_labels mrl
      JOIN merge_requests mr ON mr.id = mrl.merge_request_id
      WHERE mrl.label_id IN (SELECT id FROM $rows WHERE group_id IS NOT NULL)`,
  },
  {
    table: 'milestones',
    events: ['UPDATE'],
    projects: `SELECT DISTINCT target_project_id FROM merge_requests WHERE milestone_id IN (SELECT id FROM $rows)`,
  },
];

const transition = (event: string) =>
  event === 'DELETE' ? 'OLD TABLE AS old_rows' : 'NEW TABLE AS new_rows';
const rowsOf = (event: string) => (event === 'DELETE' ? 'old_rows' : 'new_rows');

/**
 * Changes to what a project's merge request lists present besides the merge requests' own rows
 * (assignees, reviewers, approvals, reactions, notes, approval rules and settings, protected branches,
 * labels and milestones), announced at commit on the channel of src/db/changes.ts as
 * `merge_request_records:<target project id>`, once per project and statement. An update announces
 * the new rows' projects: none of these rows moves to another project or merge request. A truncate
 * announces what no cache can read, which empties them all.
 */
export class MergeRequestRecordChanges1767800700000 implements MigrationInterface {
  name = 'MergeRequestRecordChanges1767800700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION forge_notify_merge_request_records_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('forge_changes', 'merge_request_records');
        RETURN NULL;
      END $$;`);
    for (const { table, events, projects } of SOURCES)
      for (const event of events) {
        const name = `${table}_records_${event.toLowerCase()}`;
        await q.query(`
          CREATE FUNCTION forge_notify_${name}() RETURNS trigger LANGUAGE plpgsql AS $$
          DECLARE
            project integer;
          BEGIN
            FOR project IN ${projects.replaceAll('$rows', rowsOf(event))} LOOP
              PERFORM pg_notify('forge_changes', 'merge_request_records:' || project);
            END LOOP;
            RETURN NULL;
          END $$;
          CREATE TRIGGER ${name} AFTER ${event} ON ${table} REFERENCING ${transition(event)}
            FOR EACH STATEMENT EXECUTE FUNCTION forge_notify_${name}();`);
      }
    for (const { table } of SOURCES)
      await q.query(`
        CREATE TRIGGER ${table}_records_truncate AFTER TRUNCATE ON ${table}
          FOR EACH STATEMENT EXECUTE FUNCTION forge_notify_merge_request_records_truncate();`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { table, events } of SOURCES) {
      await q.query(`DROP TRIGGER ${table}_records_truncate ON ${table};`);
      for (const event of events) {
        const name = `${table}_records_${event.toLowerCase()}`;
        await q.query(`DROP TRIGGER ${name} ON ${table}; DROP FUNCTION forge_notify_${name}();`);
      }
    }
    await q.query(`DROP FUNCTION forge_notify_merge_request_records_truncate();`);
  }
}
