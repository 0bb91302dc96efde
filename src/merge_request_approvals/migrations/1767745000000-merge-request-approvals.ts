import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Merge request approvals: the project's approval settings, approval rules (a project's when
 * `merge_request_id` is null, a merge request's otherwise, code owner rules included) and approvals.
 * Rule approvers and scopes are integer arrays: they are read whole with their rule, and the list filters
 * test membership with `= ANY`.
 */
export class MergeRequestApprovals1767745000000 implements MigrationInterface {
  name = 'MergeRequestApprovals1767745000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE project_approval_settings (
        project_id integer PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
        approvals_before_merge integer NOT NULL DEFAULT 0,
        reset_approvals_on_push boolean NOT NULL DEFAULT true,
        selective_code_owner_removals boolean NOT NULL DEFAULT false,
        disable_overriding_approvers_per_merge_request boolean NOT NULL DEFAULT false,
        merge_requests_author_approval boolean NOT NULL DEFAULT false,
        merge_requests_disable_committers_approval boolean NOT NULL DEFAULT false,
        require_reauthentication_to_approve boolean NOT NULL DEFAULT false
      );
      CREATE TABLE approval_rules (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        merge_request_id integer REFERENCES merge_requests (id) ON DELETE CASCADE,
        source_rule_id integer REFERENCES approval_rules (id) ON DELETE SET NULL,
        name varchar(1024) NOT NULL,
        rule_type varchar(32) NOT NULL,
        report_type varchar(32),
        section varchar(1024),
        approvals_required integer NOT NULL DEFAULT 0,
        applies_to_all_protected_branches boolean NOT NULL DEFAULT false,
        user_ids integer[] NOT NULL DEFAULT '{}',
        group_ids integer[] NOT NULL DEFAULT '{}',
        protected_branch_ids integer[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX approval_rules_project_name ON approval_rules (project_id, name)
        WHERE merge_request_id IS NULL;
      CREATE UNIQUE INDEX approval_rules_merge_request_name
        ON approval_rules (merge_request_id, name, COALESCE(section, ''))
        WHERE merge_request_id IS NOT NULL;
      CREATE INDEX approval_rules_merge_request ON approval_rules (merge_request_id, id);
      CREATE INDEX approval_rules_source ON approval_rules (source_rule_id);
      CREATE INDEX approval_rules_user_ids ON approval_rules USING gin (user_ids);
      CREATE TABLE merge_request_approvals (
        id serial PRIMARY KEY,
        merge_request_id integer NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        -- The head that was approved: a push leaves approvals of the new head alone.
        sha varchar(64),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX merge_request_approvals_user ON merge_request_approvals (merge_request_id, user_id);
      CREATE INDEX merge_request_approvals_by_user ON merge_request_approvals (user_id, merge_request_id);
      -- Merge requests whose rules were edited no longer follow the project's.
      CREATE TABLE merge_request_approval_overrides (
        merge_request_id integer PRIMARY KEY REFERENCES merge_requests (id) ON DELETE CASCADE
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      'DROP TABLE merge_request_approval_overrides, merge_request_approvals, approval_rules, project_approval_settings',
    );
  }
}
