import type { components } from '../../generated/openapi.js';
import { commitTitle, type GitCommit } from '../git/commits.js';
import type { CommitStats } from '../git/commit-stats.js';

export type CommitJson = components['schemas']['Commit'];

/** The commit summary every resource embeds (branches, tags, compare, commit lists). */
export function presentCommit(commit: GitCommit, projectWebUrl: string): CommitJson {
  return {
    id: commit.id,
    short_id: commit.id.slice(0, 11),
    created_at: commit.committedDate.toISOString(),
    parent_ids: commit.parentIds,
    title: commitTitle(commit.message),
    message: commit.message,
    author_name: commit.authorName,
    author_email: commit.authorEmail,
    authored_date: commit.authoredDate.toISOString(),
    committer_name: commit.committerName,
    committer_email: commit.committerEmail,
    committed_date: commit.committedDate.toISOString(),
    trailers: commit.trailers,
    extended_trailers: commit.extendedTrailers,
    web_url: `${projectWebUrl}/-/commit/${commit.id}`,
  };
}

export type CommitListItemJson = components['schemas']['CommitListItem'];
export type CommitDetailJson = components['schemas']['CommitDetail'];

/** A commit in a list, with `stats` when they were asked for. */
export function presentCommitListItem(
  commit: GitCommit,
  projectWebUrl: string,
  stats?: CommitStats,
): CommitListItemJson {
  return { ...presentCommit(commit, projectWebUrl), ...(stats ? { stats } : {}) };
}

/**
 * A single commit. `status` and `last_pipeline` are null unless a family contributes them
 * (`commitFields`: the pipelines of the commit).
 */
export function presentCommitDetail(
  commit: GitCommit,
  projectWebUrl: string,
  projectId: number,
  stats?: CommitStats,
  contributed?: Partial<CommitDetailJson>,
): CommitDetailJson {
  return {
    ...presentCommitListItem(commit, projectWebUrl, stats),
    status: null,
    project_id: projectId,
    last_pipeline: null,
    ...contributed,
  };
}
