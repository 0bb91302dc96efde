import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The application limits of each plan, one row per plan, with GitLab's defaults; this edition has the
 * plan `default` only, made here.
 */
export class PlanLimits1767901000000 implements MigrationInterface {
  name = 'PlanLimits1767901000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE plan_limits (
        plan_name varchar(64) PRIMARY KEY,
        ci_instance_level_variables bigint NOT NULL DEFAULT 25,
        ci_pipeline_size bigint NOT NULL DEFAULT 0,
        ci_active_jobs bigint NOT NULL DEFAULT 0,
        ci_project_subscriptions bigint NOT NULL DEFAULT 2,
        ci_pipeline_schedules bigint NOT NULL DEFAULT 10,
        ci_needs_size_limit bigint NOT NULL DEFAULT 50,
        ci_registered_group_runners bigint NOT NULL DEFAULT 1000,
        ci_registered_project_runners bigint NOT NULL DEFAULT 1000,
        conan_max_file_size bigint NOT NULL DEFAULT 3221225472,
        dotenv_size bigint NOT NULL DEFAULT 5120,
        dotenv_variables bigint NOT NULL DEFAULT 20,
        enforcement_limit bigint NOT NULL DEFAULT 0,
        generic_packages_max_file_size bigint NOT NULL DEFAULT 5368709120,
        helm_max_file_size bigint NOT NULL DEFAULT 5242880,
        maven_max_file_size bigint NOT NULL DEFAULT 3221225472,
        notification_limit bigint NOT NULL DEFAULT 0,
        npm_max_file_size bigint NOT NULL DEFAULT 524288000,
        nuget_max_file_size bigint NOT NULL DEFAULT 524288000,
        pipeline_hierarchy_size bigint NOT NULL DEFAULT 1000,
        pypi_max_file_size bigint NOT NULL DEFAULT 3221225472,
        storage_size_limit bigint NOT NULL DEFAULT 0,
        terraform_module_max_file_size bigint NOT NULL DEFAULT 1073741824,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      INSERT INTO plan_limits (plan_name) VALUES ('default');
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE plan_limits');
  }
}
