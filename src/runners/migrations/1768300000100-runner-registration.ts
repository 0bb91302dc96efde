import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Registration tokens: the instance's (kept as a digest, shown once when reset), and lookups of the
 * projects' and groups' `runners_token` by value. The runners' lists: by creator-independent filters.
 */
export class RunnerRegistration1768300000100 implements MigrationInterface {
  name = 'RunnerRegistration1768300000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ci_runner_instance_settings (
        id boolean PRIMARY KEY DEFAULT true CHECK (id),
        registration_token_digest varchar(64),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      INSERT INTO ci_runner_instance_settings (id) VALUES (true);
      CREATE INDEX projects_runners_token ON projects (runners_token);
      CREATE INDEX namespaces_runners_token ON namespaces ((settings->>'runners_token'))
        WHERE settings ? 'runners_token';
      CREATE INDEX ci_runner_projects_runner_created ON ci_runner_projects (runner_id, created_at, project_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ci_runner_projects_runner_created');
    await q.query('DROP INDEX namespaces_runners_token');
    await q.query('DROP INDEX projects_runners_token');
    await q.query('DROP TABLE ci_runner_instance_settings');
  }
}
