import type { components } from '../../generated/openapi.js';
import { visibilityName } from '../core/abilities.js';
import { SNIPPET_BRANCH } from './snippet-repositories.js';
import { presentUserSummary } from '../users/user.presenter.js';
import type { Snippet } from './snippet.entity.js';
import type { SnippetRecords } from './snippets.service.js';

export type SnippetJson = components['schemas']['Snippet'];

const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');

/** A snippet's web, raw and repository URLs; a project snippet's below its project's full path. */
export function snippetUrls(id: number, projectPath: string | null | undefined, externalUrl: string) {
  const prefix = projectPath ? `${projectPath}/` : '';
  const web = `${externalUrl}/${prefix}-/snippets/${id}`;
  const repoPath = `${prefix}snippets/${id}.git`;
  return {
    web_url: web,
    raw_url: `${web}/raw`,
    ssh_url_to_repo: `git@${new URL(externalUrl).hostname}:${repoPath}`,
    http_url_to_repo: `${externalUrl}/${repoPath}`,
  };
}

/**
 * GitLab's snippet: web and raw URLs under `/-/snippets/<id>` (below the project's path for a project
 * snippet), the repository at `<path>/snippets/<id>.git`, each file's raw URL at `main`.
 */
export function presentSnippet(snippet: Snippet, records: SnippetRecords, externalUrl: string): SnippetJson {
  const author = records.authors.get(snippet.authorId)!;
  const projectPath = snippet.projectId === null ? null : records.projectPaths.get(snippet.projectId);
  const urls = snippetUrls(snippet.id, projectPath, externalUrl);
  return {
    id: snippet.id,
    title: snippet.title,
    description: snippet.description,
    visibility: visibilityName(snippet.visibilityLevel),
    author: {
      ...presentUserSummary(author, externalUrl),
      email: author.profile?.public_email || null,
      created_at: author.createdAt.toISOString(),
    },
    created_at: snippet.createdAt.toISOString(),
    updated_at: snippet.updatedAt.toISOString(),
    project_id: snippet.projectId,
    ...urls,
    file_name: snippet.filePaths[0] ?? null,
    files: snippet.filePaths.map((path) => ({
      path,
      raw_url: `${urls.web_url}/raw/${SNIPPET_BRANCH}/${encodePath(path)}`,
    })),
    imported: false,
    imported_from: 'none',
  };
}
