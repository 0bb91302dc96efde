import type { MigrationInterface, QueryRunner } from 'typeorm';
import { announceReferenceChanges, announceRowChanges } from '../../db/change-triggers.js';

const PROJECTS = announceRowChanges('projects', 'project');
const NAMESPACES = announceRowChanges('namespaces', 'namespace');
const SHARES = announceReferenceChanges(
  'project_share',
  'project_group_links',
  'INSERT OR UPDATE OR DELETE',
  'project',
  'project_id',
);

/**
 * Changes that cached project reads depend on, announced at commit on the channel of
 * src/db/changes.ts: `project:<id>` when a project row or one of its shares changes or goes,
 * `namespace:<id>` when a namespace row does (a rename rewrites the full path of every descendant).
 * Access itself is announced as `access` with the authorization generation.
 */
export class ProjectChanges1767800500000 implements MigrationInterface {
  name = 'ProjectChanges1767800500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ${PROJECTS.up}
      ${NAMESPACES.up}

      ${SHARES.up}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ${SHARES.down}
      ${NAMESPACES.down}
      ${PROJECTS.down}
    `);
  }
}
