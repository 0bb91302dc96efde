import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Custom member roles: instance roles (no namespace) and roles of a top-level group. The enabled
 * permission flags are stored as a list of names, so the ability check reads them with one `unnest`.
 * A membership may carry one role; deleting a role in use is refused by the service, and a role that
 * goes with its group leaves the memberships on their base level.
 */
export class MemberRoles1767745200000 implements MigrationInterface {
  name = 'MemberRoles1767745200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE member_roles (
        id serial PRIMARY KEY,
        name varchar(255) NOT NULL,
        description text,
        namespace_id integer REFERENCES namespaces (id) ON DELETE CASCADE,
        base_access_level smallint NOT NULL,
        permissions text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX member_roles_namespace ON member_roles (namespace_id, id);
      -- Names are unique among the instance's roles and among each group's.
      CREATE UNIQUE INDEX member_roles_name ON member_roles (COALESCE(namespace_id, 0), name);
      ALTER TABLE members ADD COLUMN member_role_id integer REFERENCES member_roles (id) ON DELETE SET NULL;
      CREATE INDEX members_member_role ON members (member_role_id) WHERE member_role_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE members DROP COLUMN member_role_id');
    await q.query('DROP TABLE member_roles');
  }
}
