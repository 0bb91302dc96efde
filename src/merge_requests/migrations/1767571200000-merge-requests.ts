import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Merge requests with their assignees, reviewers and diff versions, indexed for the lists' filters. */
export class MergeRequests1767571200000 implements MigrationInterface {
  name = 'MergeRequests1767571200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE merge_requests (
        id serial PRIMARY KEY,
        iid integer NOT NULL,
        target_project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        source_project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        source_branch varchar(255) NOT NULL,
        target_branch varchar(255) NOT NULL,
        title varchar(255) NOT NULL,
        description text,
        state varchar(16) NOT NULL DEFAULT 'opened'
          CHECK (state IN ('opened', 'closed', 'locked', 'merged')),
        author_id integer REFERENCES users (id) ON DELETE SET NULL,
        draft boolean NOT NULL DEFAULT false,
        squash boolean NOT NULL DEFAULT false,
        should_remove_source_branch boolean,
        force_remove_source_branch boolean NOT NULL DEFAULT false,
        discussion_locked boolean,
        allow_collaboration boolean NOT NULL DEFAULT false,
        merge_after timestamptz,
        merged_at timestamptz,
        closed_at timestamptz,
        prepared_at timestamptz,
        closed_by_id integer REFERENCES users (id) ON DELETE SET NULL,
        merge_user_id integer REFERENCES users (id) ON DELETE SET NULL,
        merge_commit_sha varchar(64),
        squash_commit_sha varchar(64),
        head_sha varchar(64),
        merge_status varchar(32) NOT NULL DEFAULT 'unchecked',
        merge_error text,
        -- The last check found target commits missing from the source (a fast-forward needs a rebase).
        diverged boolean NOT NULL DEFAULT false,
        time_estimate integer NOT NULL DEFAULT 0,
        total_time_spent integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX merge_requests_project_iid ON merge_requests (target_project_id, iid);
      -- One open merge request per pair of branches: the database settles concurrent creates.
      CREATE UNIQUE INDEX merge_requests_open_pair ON merge_requests
        (source_project_id, source_branch, target_project_id, target_branch) WHERE state IN ('opened', 'locked');
      CREATE INDEX merge_requests_project_created ON merge_requests (target_project_id, created_at, id);
      CREATE INDEX merge_requests_project_state_created ON merge_requests (target_project_id, state, created_at, id);
      CREATE INDEX merge_requests_project_updated ON merge_requests (target_project_id, updated_at, id);
      CREATE INDEX merge_requests_created ON merge_requests (created_at, id);
      CREATE INDEX merge_requests_author ON merge_requests (author_id, created_at, id);
      CREATE INDEX merge_requests_merge_user ON merge_requests (merge_user_id) WHERE merge_user_id IS NOT NULL;
      CREATE INDEX merge_requests_source_branch ON merge_requests (source_project_id, source_branch);
      CREATE INDEX merge_requests_target_branch ON merge_requests (target_project_id, target_branch);

      CREATE TABLE merge_request_assignees (
        merge_request_id integer NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        PRIMARY KEY (merge_request_id, user_id)
      );
      CREATE INDEX merge_request_assignees_user ON merge_request_assignees (user_id);

      CREATE TABLE merge_request_reviewers (
        merge_request_id integer NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        PRIMARY KEY (merge_request_id, user_id)
      );
      CREATE INDEX merge_request_reviewers_user ON merge_request_reviewers (user_id);

      CREATE TABLE merge_request_diffs (
        id serial PRIMARY KEY,
        merge_request_id integer NOT NULL REFERENCES merge_requests (id) ON DELETE CASCADE,
        base_commit_sha varchar(64),
        start_commit_sha varchar(64) NOT NULL,
        head_commit_sha varchar(64) NOT NULL,
        patch_id_sha varchar(64),
        real_size integer NOT NULL DEFAULT 0,
        commits_count integer NOT NULL DEFAULT 0,
        state varchar(16) NOT NULL DEFAULT 'collected',
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX merge_request_diffs_merge_request ON merge_request_diffs (merge_request_id, id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE merge_request_diffs;
      DROP TABLE merge_request_reviewers;
      DROP TABLE merge_request_assignees;
      DROP TABLE merge_requests;
    `);
  }
}
