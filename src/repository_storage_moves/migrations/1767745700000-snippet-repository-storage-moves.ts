import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Snippet repository storage moves: the bulk move walks the snippets of a storage in id order. */
export class SnippetRepositoryStorageMoves1767745700000 implements MigrationInterface {
  name = 'SnippetRepositoryStorageMoves1767745700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX snippets_repository_storage ON snippets (repository_storage, id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX snippets_repository_storage');
  }
}
