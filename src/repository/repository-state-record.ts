import type { EntityManager } from 'typeorm';
import type { RepositoryState } from '../git/repository-state.js';

/** Stores a reading of git (`GitRepository.state`) in a project's row and statistics: database writes only. */
export async function writeRepositoryState(
  manager: EntityManager,
  projectId: number,
  state: RepositoryState,
): Promise<void> {
  await manager.query('UPDATE projects SET repository_empty = $2, readme_path = $3 WHERE id = $1', [
    projectId,
    state.empty,
    state.readmePath,
  ]);
  await manager.query(
    `UPDATE project_statistics SET commit_count = $2, repository_size = $3,
       storage_size = $3 + lfs_objects_size + job_artifacts_size + pipeline_artifacts_size + packages_size
         + snippets_size + uploads_size + wiki_size
     WHERE project_id = $1`,
    [projectId, state.commitCount, state.sizeBytes],
  );
}
