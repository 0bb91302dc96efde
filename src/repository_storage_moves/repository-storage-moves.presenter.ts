import { visibilityName } from '../core/abilities.js';
import { moveStateName } from './write-gate.js';
import { snippetUrls } from '../snippets/snippet.presenter.js';
import type { MoveRecord } from './repository-storage-moves.service.js';

/** GitLab's BasicRepositoryStorageMove: what every kind of move shows. */
const presentMove = (move: MoveRecord) => ({
  id: move.id,
  created_at: move.createdAt.toISOString(),
  state: moveStateName(move.state),
  source_storage_name: move.source,
  destination_storage_name: move.destination,
});

/** A project repository storage move, with the project as GitLab's ProjectIdentity. */
export function presentProjectStorageMove(move: MoveRecord) {
  const project = move.container;
  return {
    ...presentMove(move),
    project: {
      id: project.id,
      description: project.description,
      name: project.name,
      name_with_namespace: project.fullName,
      path: project.path,
      path_with_namespace: project.fullPath,
      created_at: project.createdAt.toISOString(),
    },
  };
}

/** A group repository storage move, with the group as GitLab's BasicGroupDetails. */
export function presentGroupStorageMove(move: MoveRecord, externalUrl: string) {
  const group = move.container;
  return {
    ...presentMove(move),
    group: { id: group.id, web_url: `${externalUrl}/groups/${group.fullPath}`, name: group.name },
  };
}

/** A snippet repository storage move, with the snippet as GitLab's BasicSnippet. */
export function presentSnippetStorageMove(move: MoveRecord, externalUrl: string) {
  const snippet = move.container;
  return {
    ...presentMove(move),
    snippet: {
      id: snippet.id,
      title: snippet.name,
      description: snippet.description,
      visibility: visibilityName(snippet.visibilityLevel ?? 0),
      updated_at: (snippet.updatedAt ?? snippet.createdAt).toISOString(),
      created_at: snippet.createdAt.toISOString(),
      project_id: snippet.projectId,
      ...snippetUrls(snippet.id, snippet.projectPath, externalUrl),
    },
  };
}
