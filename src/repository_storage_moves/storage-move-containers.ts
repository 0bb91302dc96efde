/**
 * The containers whose repositories storage moves carry: projects (their repository, and their place
 * in a fork network), groups (their wiki repository, which forge-api groups never have) and snippets.
 */
import type { EntityManager } from 'typeorm';
import type { RepositoryContainer } from './storage-mover.js';
import { RepositoryStorage } from '../git/storage.js';
import type { SnippetRepositories } from '../snippets/snippet-repositories.js';

export function projectContainer(storage: RepositoryStorage): RepositoryContainer {
  return {
    type: 'project',
    label: 'project',
    async locate(tx, id) {
      const [row] = (await tx.query(
        `SELECT p.repository_storage, p.borrows_objects_from_id AS lender_id, l.repository_storage AS lender_storage
         FROM projects p LEFT JOIN projects l ON l.id = p.borrows_objects_from_id
         WHERE p.id = $1 FOR UPDATE OF p`,
        [id],
      )) as Array<{ repository_storage: string; lender_id: number | null; lender_storage: string | null }>;
      if (!row) return null;
      const lender =
        row.lender_id !== null && row.lender_storage !== null
          ? { id: Number(row.lender_id), storage: row.lender_storage }
          : null;
      return { storage: row.repository_storage, lender };
    },
    diskPath: (name, id) => storage.diskPath(name, id),
    async relocate(tx, id, name, borrowing) {
      // A copy that could not borrow from its lender on the new storage holds its own objects.
      await tx.query(
        `UPDATE projects SET repository_storage = $2, updated_at = now(),
           borrows_objects_from_id = CASE WHEN $3::boolean THEN borrows_objects_from_id END
         WHERE id = $1`,
        [id, name, borrowing],
      );
    },
    async borrowers(manager, id) {
      const rows = (await manager.query(
        'SELECT id, repository_storage FROM projects WHERE borrows_objects_from_id = $1 ORDER BY id',
        [id],
      )) as Array<{ id: number; repository_storage: string }>;
      return rows.map((row) => ({ id: Number(row.id), storage: row.repository_storage }));
    },
    async onStorage(manager, name, afterId, limit) {
      const rows = (await manager.query(
        'SELECT id FROM projects WHERE repository_storage = $1 AND id > $2 ORDER BY id LIMIT $3',
        [name, afterId, limit],
      )) as Array<{ id: number }>;
      return rows.map((row) => Number(row.id));
    },
  };
}

/**
 * A group's repository is its wiki's, and forge-api has no group wikis: a group move finds nothing to
 * copy and finishes (GitLab mirrors, tracks and removes the wiki only when it exists), and no group is
 * on any storage for a bulk move.
 */
export function groupContainer(): RepositoryContainer {
  return {
    type: 'group',
    label: 'group',
    async locate(tx: EntityManager, id: number) {
      const [row] = (await tx.query(`SELECT id FROM namespaces WHERE id = $1 AND kind = 'group' FOR UPDATE`, [
        id,
      ])) as unknown[];
      return row ? { storage: null } : null;
    },
    diskPath: (name, id) => `${name}:@groups/${RepositoryStorage.hash(id)}.wiki.git`,
    relocate: async () => undefined,
    borrowers: async () => [],
    onStorage: async () => [],
  };
}

/**
 * A snippet's repository (`@snippets/…`), on the storage its row names: a project snippet's starts on
 * its project's storage, a personal one's on `default`, and each moves on its own. No snippet borrows
 * objects.
 */
export function snippetContainer(repositories: SnippetRepositories): RepositoryContainer {
  return {
    type: 'snippet',
    label: 'snippet',
    async locate(tx, id) {
      const [row] = (await tx.query('SELECT repository_storage FROM snippets WHERE id = $1 FOR UPDATE', [
        id,
      ])) as Array<{ repository_storage: string }>;
      return row ? { storage: row.repository_storage, lender: null } : null;
    },
    diskPath: (name, id) => repositories.dir(name, id),
    async relocate(tx, id, name) {
      await tx.query('UPDATE snippets SET repository_storage = $2 WHERE id = $1', [id, name]);
    },
    borrowers: async () => [],
    async onStorage(manager, name, afterId, limit) {
      const rows = (await manager.query(
        'SELECT id FROM snippets WHERE repository_storage = $1 AND id > $2 ORDER BY id LIMIT $3',
        [name, afterId, limit],
      )) as Array<{ id: number }>;
      return rows.map((row) => Number(row.id));
    },
  };
}
