/**
 * What project lists show about a repository (empty or not, its README, commit count and size), read
 * from git after every change and stored, so that a page of projects never asks git once per project.
 */
import type { EntityManager } from 'typeorm';
import { git, gitText } from './git.js';

/** GitLab prefers a README with a markup it renders over a plain one. */
const README = /^readme(\.(md|markdown|mdown|mkd|rst|adoc|asciidoc|org|textile|txt|rdoc))?$/i;

export interface RepositoryState {
  empty: boolean;
  readmePath: string | null;
  commitCount: number;
  sizeBytes: number;
}

export async function readRepositoryState(
  dir: string,
  defaultBranch: string | null,
): Promise<RepositoryState> {
  const anyRef = await gitText(['for-each-ref', '--count=1', '--format=%(refname)'], { gitDir: dir });
  let readmePath: string | null = null;
  let commitCount = 0;
  const branchRef = defaultBranch ? `refs/heads/${defaultBranch}` : null;
  const hasBranch =
    branchRef !== null &&
    (await git(['rev-parse', '--verify', '--quiet', branchRef], { gitDir: dir, okCodes: [1] })).code === 0;
  if (hasBranch) {
    const names = (await gitText(['ls-tree', '--name-only', branchRef], { gitDir: dir })).split('\n');
    const readmes = names.filter((name) => README.test(name));
    readmePath = readmes.find((name) => name.includes('.')) ?? readmes[0] ?? null;
    commitCount = Number(await gitText(['rev-list', '--count', branchRef], { gitDir: dir }));
  }
  const counts = await gitText(['count-objects', '-v'], { gitDir: dir });
  const kib = (key: string) => Number(new RegExp(`^${key}: (\\d+)$`, 'm').exec(counts)?.[1] ?? 0);
  return {
    empty: anyRef === '',
    readmePath,
    commitCount,
    sizeBytes: (kib('size') + kib('size-pack')) * 1024,
  };
}

/** Stores a fresh reading for one project (its row and its statistics). */
export async function refreshRepositoryState(
  manager: EntityManager,
  project: { id: number; defaultBranch: string | null },
  dir: string,
): Promise<void> {
  const state = await readRepositoryState(dir, project.defaultBranch);
  await manager.query('UPDATE projects SET repository_empty = $2, readme_path = $3 WHERE id = $1', [
    project.id,
    state.empty,
    state.readmePath,
  ]);
  await manager.query(
    `UPDATE project_statistics SET commit_count = $2, repository_size = $3,
       storage_size = $3 + lfs_objects_size + job_artifacts_size + pipeline_artifacts_size + packages_size
         + snippets_size + uploads_size + wiki_size
     WHERE project_id = $1`,
    [project.id, state.commitCount, state.sizeBytes],
  );
}
