import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Job artifacts (one row per uploaded file) and the entries of their zip archives. */
export class JobArtifacts1768300200000 implements MigrationInterface {
  name = 'JobArtifacts1768300200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ci_job_artifacts (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        job_id integer NOT NULL REFERENCES ci_builds (id) ON DELETE CASCADE,
        file_type varchar(32) NOT NULL,
        file_format varchar(8) NOT NULL,
        filename varchar(255) NOT NULL,
        object_key text NOT NULL,
        size bigint NOT NULL,
        expire_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (job_id, file_type)
      );
      CREATE INDEX ci_job_artifacts_project ON ci_job_artifacts (project_id, id);
      CREATE INDEX ci_job_artifacts_expire ON ci_job_artifacts (expire_at) WHERE expire_at IS NOT NULL;
      CREATE TABLE ci_job_artifact_entries (
        artifact_id integer NOT NULL REFERENCES ci_job_artifacts (id) ON DELETE CASCADE,
        path text NOT NULL,
        header_offset bigint NOT NULL,
        compressed_size bigint NOT NULL,
        size bigint NOT NULL,
        compression_method smallint NOT NULL,
        flags integer NOT NULL,
        crc32 bigint NOT NULL,
        PRIMARY KEY (artifact_id, path)
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE ci_job_artifact_entries; DROP TABLE ci_job_artifacts');
  }
}
